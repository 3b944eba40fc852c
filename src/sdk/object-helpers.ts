import type { KubeObject } from '../core/kube-object.js'
import type { ObjectMap } from './hook-types.js'

/** Returns the observed objects of one type (`Kind.apiVersion`, e.g. `Pod.v1`) as a list. */
export function listObserved<T extends KubeObject>(map: ObjectMap<T>, type: string): T[] {
  return Object.values(map[type] ?? {})
}

/** Counts the observed objects of one type (`Kind.apiVersion`). */
export function countObserved(map: ObjectMap, type: string): number {
  return Object.keys(map[type] ?? {}).length
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
