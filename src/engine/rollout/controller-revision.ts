/**
 * The ControllerRevision object (`metacontroller.k8s.io/v1alpha1`, spec §1.4) and the pure
 * operations on the child claims it records.
 *
 * @module
 */
import type { JsonObject, KubeObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'

/** The apiVersion of ControllerRevision objects. */
export const CONTROLLER_REVISION_API_VERSION = 'metacontroller.k8s.io/v1alpha1'

/** Label naming the API group of the parent resource a revision belongs to. */
export const REVISION_API_GROUP_LABEL = 'metacontroller.k8s.io/apiGroup'

/** Label naming the parent resource (plural) a revision belongs to. */
export const REVISION_RESOURCE_LABEL = 'metacontroller.k8s.io/resource'

/** The children of one kind a revision claims, by relative name. */
export interface RevisionChildren {
  readonly apiGroup: string
  readonly kind: string
  readonly names: readonly string[]
}

/** A ControllerRevision object. */
export interface ControllerRevision extends KubeObject {
  /** The parent fields of this revision (`revisionHistory.fieldPaths`), as a partial object. */
  readonly parentPatch: JsonObject
  readonly children?: readonly RevisionChildren[]
}

/** The key of a child kind, version-agnostic as upstream: `Kind.group`. */
export function groupKindKey(apiGroup: string, kind: string): string {
  return `${kind}.${apiGroup}`
}

/**
 * Reads a cached object as a ControllerRevision: a missing `parentPatch` is `{}`, malformed
 * `children` entries are dropped (the CRD schema refuses them anyway).
 */
export function asControllerRevision(object: KubeObject): ControllerRevision {
  const patch = object['parentPatch']
  const raw = object['children']
  const children = (Array.isArray(raw) ? (raw as unknown[]) : []).flatMap(
    (entry): RevisionChildren[] => {
      if (!isJsonObject(entry)) return []
      const { apiGroup, kind, names } = entry
      if (typeof apiGroup !== 'string' || typeof kind !== 'string' || !Array.isArray(names))
        return []
      return [{ apiGroup, kind, names: names.filter((n): n is string => typeof n === 'string') }]
    }
  )
  return { ...object, parentPatch: isJsonObject(patch) ? patch : {}, children }
}

/** Counts the children a revision claims. */
export function countClaims(children: readonly RevisionChildren[]): number {
  return children.reduce((sum, entry) => sum + entry.names.length, 0)
}

/** Returns the claims with `name` added under its kind (appended; unchanged if already there). */
export function addClaim(
  children: readonly RevisionChildren[],
  apiGroup: string,
  kind: string,
  name: string
): RevisionChildren[] {
  const index = children.findIndex((c) => c.apiGroup === apiGroup && c.kind === kind)
  if (index === -1) return [...children, { apiGroup, kind, names: [name] }]
  return children.map((entry, i) =>
    i !== index || entry.names.includes(name) ? entry : { ...entry, names: [...entry.names, name] }
  )
}

/**
 * Returns the claims without `name` under its kind. A kind left with no names is dropped at
 * once (upstream drops it one pass later, which costs one more revision write).
 */
export function removeClaim(
  children: readonly RevisionChildren[],
  apiGroup: string,
  kind: string,
  name: string
): RevisionChildren[] {
  return children.flatMap((entry) => {
    if (entry.apiGroup !== apiGroup || entry.kind !== kind || !entry.names.includes(name))
      return [entry]
    const names = entry.names.filter((n) => n !== name)
    return names.length === 0 ? [] : [{ ...entry, names }]
  })
}
