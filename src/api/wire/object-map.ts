/**
 * Object maps (`children`, `attachments`, `related`) as the v1 and v2 wire formats send them.
 *
 * @remarks
 * Internally, objects are keyed uniformly (`namespace/name`, or `name` when cluster-scoped). v2
 * hooks receive exactly that (upstream `UniformObjectMap`). v1 hooks receive upstream's
 * `RelativeObjectMap`: keys are relative to the parent, and for a namespaced parent every object
 * from another namespace, and every cluster-scoped object, is left out (spec §2.2).
 *
 * Every type present in the internal map stays present on the wire, even when it ends up empty
 * (`"Pod.v1": {}`). Types and object keys are written in sorted order, as Go's `encoding/json`
 * writes map keys, so equal maps always encode to the same text.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { ObjectsByType } from '../hook-model.js'

/** An object map on the wire: GVK key, then object key, then the full object. */
export type WireObjectMap = Record<string, Record<string, KubeObject>>

/** Turns internal (uniform) object maps into the wire form of one hook version. */
export type ObjectMapEncoder = (objects: ObjectsByType, parent: KubeObject) => WireObjectMap

/** Encodes an object map for a v2 hook: the uniform keys, unchanged, and every object. */
export function encodeUniformObjectMap(objects: ObjectsByType): WireObjectMap {
  return buildMap(objects, (key) => key)
}

/**
 * Encodes an object map for a v1 hook, relative to the parent (upstream `RelativeObjectMap`).
 *
 * @remarks
 * When the parent is namespaced, objects in other namespaces and cluster-scoped objects are
 * dropped, related objects included. Keys come from each object's own metadata, see
 * {@link relativeObjectKey}.
 */
export function encodeRelativeObjectMap(objects: ObjectsByType, parent: KubeObject): WireObjectMap {
  return buildMap(objects, (_key, object) =>
    isVisibleToV1(parent, object) ? relativeObjectKey(parent, object) : undefined
  )
}

/**
 * Returns the v1 key of an object: `namespace/name` when the parent is cluster-scoped and the
 * object namespaced, otherwise `name`.
 */
export function relativeObjectKey(parent: KubeObject, object: KubeObject): string {
  const namespace = namespaceOf(object)
  const name = object.metadata.name ?? ''
  return namespaceOf(parent) === '' && namespace !== '' ? `${namespace}/${name}` : name
}

/**
 * Tells whether a v1 request includes an object: always for a cluster-scoped parent, otherwise
 * only when the object is in the parent's namespace.
 */
export function isVisibleToV1(parent: KubeObject, object: KubeObject): boolean {
  const parentNamespace = namespaceOf(parent)
  return parentNamespace === '' || namespaceOf(object) === parentNamespace
}

function namespaceOf(object: KubeObject): string {
  return object.metadata.namespace ?? ''
}

function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** Builds a wire map; `keyOf` returns the wire key of an object, or undefined to drop it. */
function buildMap(
  objects: ObjectsByType,
  keyOf: (objectKey: string, object: KubeObject) => string | undefined
): WireObjectMap {
  const types = [...objects.keys()].sort(compareKeys)
  // Object.fromEntries defines own properties, so no key can reach a prototype setter.
  return Object.fromEntries(
    types.map((type): [string, Record<string, KubeObject>] => {
      const entries: [string, KubeObject][] = []
      for (const [objectKey, object] of objects.get(type) ?? []) {
        const key = keyOf(objectKey, object)
        if (key !== undefined) entries.push([key, object])
      }
      entries.sort(([a], [b]) => compareKeys(a, b))
      return [type, Object.fromEntries(entries)]
    })
  )
}
