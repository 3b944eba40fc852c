/**
 * How one watch event meets an informer's cache: the cache changed, and the change as the
 * handler call that tells subscribers.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { objectKey } from '../../core/object-key.js'
import type { WatchEvent } from '../../kube/watch-event.js'
import type { HandlerCall } from './handler-fan-out.js'
import type { ObjectStore } from './object-store.js'
import { watchStatusError } from './watch-status-error.js'

/**
 * Applies one watch event of the collection `description` to `store`, each object rewritten by
 * `transform` first, and returns the call that tells the handlers; undefined when nothing changed
 * (a bookmark, or an object already cached at that resourceVersion).
 *
 * @throws WatchStatusError for an `ERROR` event.
 */
export function applyWatchEvent<T extends KubeObject>(
  store: ObjectStore<T>,
  event: WatchEvent,
  transform: (object: T) => T,
  description: string
): HandlerCall<T> | undefined {
  switch (event.type) {
    case 'ADDED':
    case 'MODIFIED': {
      const object = transform(event.object as T)
      const old = store.get(objectKey(object))
      if (old?.metadata.resourceVersion === object.metadata.resourceVersion && old !== undefined) {
        return undefined
      }
      store.upsert(object)
      return old === undefined ? (h) => h.onAdd?.(object) : (h) => h.onUpdate?.(old, object)
    }
    case 'DELETED': {
      // The event carries the object's final state, which is the last known one.
      const last = transform(event.object as T)
      store.remove(objectKey(last))
      return (h) => h.onDelete?.(last)
    }
    case 'BOOKMARK':
      return undefined
    case 'ERROR':
      throw watchStatusError(description, event.object)
    default: {
      const unreachable: never = event.type
      throw new Error(`unexpected watch event ${String(unreachable)}`)
    }
  }
}
