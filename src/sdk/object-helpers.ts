import type { KubeObject } from '../core/kube-object.js'

/** The object type of one entry of a {@link ChildrenMap} or {@link ObjectMap}. */
export type ObservedOf<Entry> =
  NonNullable<Entry> extends Readonly<Record<string, infer T>> ? T : never

/**
 * Returns the observed objects of one type (`Kind.apiVersion`, e.g. `Pod.v1`) as a list, typed
 * by the map's entry (`Pod[]` for `children['Pod.v1']` of a `ChildrenMap<Pod | Service>`).
 */
export function listObserved<M extends object, K extends keyof M & string>(
  map: M,
  type: K
): ObservedOf<M[K]>[] {
  const entry = map[type] as Readonly<Record<string, ObservedOf<M[K]>>> | undefined
  return Object.values(entry ?? {})
}

/** Counts the observed objects of one type (`Kind.apiVersion`). */
export function countObserved<M extends object>(map: M, type: keyof M & string): number {
  const entry = map[type] as object | undefined
  return Object.keys(entry ?? {}).length
}

/** Metadata accepted by {@link kubeObject}. */
export interface ChildMetadata {
  readonly name: string
  readonly namespace?: string
  readonly labels?: Readonly<Record<string, string>>
  readonly annotations?: Readonly<Record<string, string>>
}

/**
 * Builds a desired child: apiVersion, kind, metadata, and the rest of its fields.
 *
 * @example
 * ```ts
 * kubeObject('v1', 'ConfigMap', { name: 'settings' }, { data: { mode: 'fast' } })
 * ```
 */
export function kubeObject(
  apiVersion: string,
  kind: string,
  metadata: ChildMetadata,
  fields: Record<string, unknown> = {}
): KubeObject {
  return {
    apiVersion,
    kind,
    metadata: {
      name: metadata.name,
      ...(metadata.namespace === undefined ? {} : { namespace: metadata.namespace }),
      ...(metadata.labels === undefined ? {} : { labels: { ...metadata.labels } }),
      ...(metadata.annotations === undefined ? {} : { annotations: { ...metadata.annotations } }),
    },
    ...fields,
  }
}

/** Returns the GVK key the engine uses for a type: `Kind.apiVersion` (`Pod.v1`). */
export function typeKey(apiVersion: string, kind: string): string {
  return `${kind}.${apiVersion}`
}
