/**
 * Resolved resources for the in-memory tier: what discovery would answer, built by hand.
 *
 * @module
 */
import type { ResourceInfo } from '../kube/resource-map.js'
import { formatApiVersion } from '../kube/resource-map.js'

/** What {@link fakeResourceInfo} needs to describe a resource. */
export interface FakeResourceSpec {
  /** API group; `''` for the core group. */
  readonly group: string
  readonly version: string
  /** Plural resource name, e.g. `configmaps`. */
  readonly resource: string
  readonly kind: string
  readonly namespaced: boolean
  /** Subresources such as `status` (none). */
  readonly subresources?: readonly string[]
}

/** Builds the {@link ResourceInfo} discovery would return for a resource. */
export function fakeResourceInfo(spec: FakeResourceSpec): ResourceInfo {
  const { group, version, resource, kind, namespaced } = spec
  return {
    ref: { group, version, resource, namespaced },
    apiVersion: formatApiVersion(group, version),
    kind,
    responseKind: { group, version, kind },
    singularName: kind.toLowerCase(),
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    shortNames: [],
    categories: [],
    subresources: spec.subresources ?? [],
  }
}
