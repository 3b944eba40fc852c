/**
 * The scope of a parent's (or a decorator target's) kind without discovery, by the engine's
 * rules: the CRD's `spec.scope` when a CRD of its group and kind is given, else the built-in
 * kinds' table (`src/api/resource-names.ts`: `Namespace` is cluster-scoped, `Pod` namespaced).
 * One home for `serveHooks`, the test helpers, `metactl render` and `metactl dev`.
 *
 * @module
 */
import { isJsonObject } from '../core/kube-object.js'
import { groupOf } from '../core/owner-references.js'
import { isClusterScoped, kindOf, pluralOf } from '../api/resource-names.js'

/** What a CustomResourceDefinition says of its resource. */
export interface CrdNames {
  readonly group: string
  readonly plural: string
  readonly kind: string
  readonly namespaced: boolean
}

/** The names of a CustomResourceDefinition; undefined when it is not one. */
export function crdNames(crd: unknown): CrdNames | undefined {
  if (!isJsonObject(crd)) return undefined
  const spec = crd['spec']
  if (!isJsonObject(spec) || !isJsonObject(spec['names'])) return undefined
  const { group, scope } = spec
  const { plural, kind } = spec['names']
  if (typeof group !== 'string' || typeof plural !== 'string' || typeof kind !== 'string')
    return undefined
  return { group, plural, kind, namespaced: scope !== 'Cluster' }
}

/** The CRD among `crds` that serves `kind` (or `resource`) of `apiVersion`'s group. */
export function crdOf<Crd>(
  crds: readonly Crd[],
  apiVersion: string,
  kind: string,
  resource?: string
): Crd | undefined {
  const group = groupOf(apiVersion)
  return crds.find((crd) => {
    const names = crdNames(crd)
    return (
      names?.group === group &&
      (names.kind === kind || (resource !== undefined && names.plural === resource))
    )
  })
}

/** Where a scope came from: a CRD, the built-in kinds' table, or neither (unknown). */
export type ScopeSource = 'crd' | 'built-in' | 'unknown'

/** A kind's scope, and where it came from. */
export interface KindScope {
  /** Undefined when neither a CRD nor the built-in table knows the kind. */
  readonly namespaced: boolean | undefined
  readonly from: ScopeSource
}

/**
 * The scope of `kind` of `apiVersion`: its CRD's, else the built-in table's; unknown for a custom
 * kind without a CRD (each caller then says what it assumes, and documents it).
 */
export function kindScope(
  apiVersion: string,
  kind: string,
  crds: readonly unknown[] = [],
  resource?: string
): KindScope {
  const crd = crdNames(crdOf(crds, apiVersion, kind, resource))
  if (crd !== undefined) return { namespaced: crd.namespaced, from: 'crd' }
  if (isClusterScoped(apiVersion, kind)) return { namespaced: false, from: 'built-in' }
  if (!kindOf(apiVersion, pluralOf(kind)).guessed) return { namespaced: true, from: 'built-in' }
  return { namespaced: undefined, from: 'unknown' }
}
