/**
 * The initial phase of a streaming initial list (KEP-3157 WatchList): the objects the watch sends
 * before the bookmark that ends it, gathered apart from the informer's cache so the cache is
 * swapped in one pass, as a list is applied.
 *
 * @module
 */
import { isJsonObject } from '../../core/kube-object.js'
import type { KubeObject } from '../../core/kube-object.js'
import { objectKey } from '../../core/object-key.js'
import { ApiError } from '../../kube/api-error.js'
import type { WatchEvent } from '../../kube/watch-event.js'
import { WatchStatusError } from './watch-status-error.js'

/** The annotation of the bookmark that ends a streaming list's initial events. */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end'

/**
 * Raised when a server streamed without honouring `sendInitialEvents`: its watch sent events and
 * ended before the bookmark that ends the initial events.
 */
export class InitialEventsIgnoredError extends Error {
  override readonly name = 'InitialEventsIgnoredError'
}

/**
 * Tells whether `error` means the server refuses streaming initial lists, for good: 422 Invalid
 * (what kube-apiserver answers with the `WatchList` gate off, or an older server that forbids
 * `resourceVersionMatch` on a watch) or 400, at the request or as the stream's first `ERROR`, or
 * a stream that ignored the request. Any other failure is retried as a failure.
 */
export function isWatchListRefusal(error: unknown): boolean {
  if (error instanceof InitialEventsIgnoredError) return true
  const code =
    error instanceof ApiError
      ? error.statusCode
      : error instanceof WatchStatusError
        ? error.code
        : undefined
  return code === 400 || code === 422
}

/** Whether `event` is the bookmark that ends the initial events. */
function endsInitialEvents(event: WatchEvent): boolean {
  const annotations = event.object.metadata.annotations
  return isJsonObject(annotations) && annotations[INITIAL_EVENTS_END_ANNOTATION] === 'true'
}

/**
 * A fresh store for the initial events of one streaming list, filled event by event (each object
 * transformed as it arrives, so the raw one can be collected at once) until the end bookmark.
 */
export class InitialEvents<T extends KubeObject> {
  readonly #objects = new Map<string, T>()
  readonly #transform: (object: T) => T

  /** Creates an empty store; `transform` rewrites each object before it is kept. */
  constructor(transform: (object: T) => T) {
    this.#transform = transform
  }

  /** The objects gathered so far, in arrival order. */
  items(): T[] {
    return [...this.#objects.values()]
  }

  /**
   * Takes one event of the initial phase (not an `ERROR`); returns the resourceVersion of the
   * end bookmark when it is that bookmark, undefined otherwise.
   */
  take(event: WatchEvent): string | undefined {
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED': {
        // Changes after the snapshot may come before the bookmark; the last one wins.
        const object = this.#transform(event.object as T)
        this.#objects.set(objectKey(object), object)
        return undefined
      }
      case 'DELETED':
        this.#objects.delete(objectKey(event.object))
        return undefined
      case 'BOOKMARK':
        // Another bookmark only moves the resourceVersion the end bookmark will give anyway.
        return endsInitialEvents(event) ? (event.object.metadata.resourceVersion ?? '') : undefined
      case 'ERROR':
        throw new Error('an ERROR event is not an initial event')
      default: {
        const unreachable: never = event.type
        throw new Error(`unexpected watch event ${String(unreachable)}`)
      }
    }
  }
}
