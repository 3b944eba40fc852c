/**
 * How a relist meets the cache: the cache brought to the new state in one pass, and the
 * difference as handler calls, whether the state came from a paged list or a streaming one.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { objectKey } from '../../core/object-key.js'
import type { HandlerCall } from './handler-fan-out.js'
import type { ObjectStore } from './object-store.js'

/**
 * Brings `store` to exactly `items` (already transformed) and returns the calls that tell the
 * handlers: adds for new objects, updates for a changed resourceVersion, deletes (with the last
 * known object) for objects that vanished. Nothing unchanged is told again.
 */
export function replaceStore<T extends KubeObject>(
  store: ObjectStore<T>,
  items: Iterable<T>
): HandlerCall<T>[] {
  const calls: HandlerCall<T>[] = []
  const seen = new Set<string>()
  for (const item of items) {
    const key = objectKey(item)
    seen.add(key)
    const old = store.get(key)
    if (old?.metadata.resourceVersion === item.metadata.resourceVersion && old !== undefined) {
      continue
    }
    store.upsert(item)
    calls.push(old === undefined ? (h) => h.onAdd?.(item) : (h) => h.onUpdate?.(old, item))
  }
  for (const object of store.list()) {
    const key = objectKey(object)
    if (!seen.has(key)) {
      store.remove(key)
      calls.push((h) => h.onDelete?.(object))
    }
  }
  return calls
}
