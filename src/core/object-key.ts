/**
 * The one home of object identity: the key an object is stored, queued and mapped under, and the
 * namespace and UID options a write names it by.
 *
 * @module
 */
import type { KubeObject } from './kube-object.js'

/**
 * Returns the object key: `namespace/name` for a namespaced object, `name` for a cluster-scoped
 * one. Caches, work queues and the hook protocol's uniform (v2) object maps all use it.
 */
export function objectKey(object: KubeObject): string {
  return keyOf(object.metadata.namespace, object.metadata.name ?? '')
}

/** Returns the object key of a name in a namespace (none or empty: cluster-scoped). */
export function keyOf(namespace: string | undefined, name: string): string {
  return namespace === undefined || namespace === '' ? name : `${namespace}/${name}`
}

/** Returns the object's namespace, or undefined when it is cluster-scoped (none, or empty). */
export function namespaceOf(object: KubeObject): string | undefined {
  const { namespace } = object.metadata
  return namespace === undefined || namespace === '' ? undefined : namespace
}

/**
 * Returns `{ namespace }` for a namespaced object and `{}` for a cluster-scoped one: the shape the
 * dynamic client's options take, so that call sites can spread it.
 */
export function namespaceOption(object: KubeObject): { namespace?: string } {
  const namespace = namespaceOf(object)
  return namespace === undefined ? {} : { namespace }
}

/**
 * Returns `{ uid }` when the object has one, `{}` otherwise: a write guarded by it fails rather
 * than touch a same-named object that replaced this one.
 */
export function uidOption(object: KubeObject): { uid?: string } {
  const { uid } = object.metadata
  return uid === undefined || uid === '' ? {} : { uid }
}
