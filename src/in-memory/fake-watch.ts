/**
 * The watch half of the in-memory API server: which objects a list or watch scope selects, and
 * one watch stream as an async iterable that the fake pushes events into.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import { compileLabelSelector } from '../core/label-selector.js'
import { parseSelectorString } from '../core/parse-selector-string.js'
import type { WatchEvent } from '../kube/watch-event.js'
import type { ListWatchScope } from '../runtime/informers/list-watcher.js'

/** Tells whether an object belongs to a list or watch scope. */
export type ScopeMatcher = (object: KubeObject) => boolean

/** The field selectors the fake understands: the two every resource supports. */
const FIELDS: Readonly<Record<string, (object: KubeObject) => string>> = {
  'metadata.name': (o) => o.metadata.name ?? '',
  'metadata.namespace': (o) => o.metadata.namespace ?? '',
}

function compileFieldSelector(text: string): ScopeMatcher {
  const terms = text
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '')
    .map((term) => {
      const match = /^([^!=]+)(==|=|!=)(.*)$/.exec(term)
      const read = match === null ? undefined : FIELDS[match[1]?.trim() ?? '']
      if (match === null || read === undefined) {
        // Refused loudly: silently matching everything would make a test pass for a wrong reason.
        throw new Error(`fake cluster: unsupported field selector ${JSON.stringify(term)}`)
      }
      const negate = match[2] === '!='
      const value = match[3]?.trim() ?? ''
      return (object: KubeObject) => (read(object) === value) !== negate
    })
  return (object) => terms.every((term) => term(object))
}

/**
 * Compiles a {@link ListWatchScope} (namespace, label selector string, `metadata.name` and
 * `metadata.namespace` field selectors) into a matcher.
 *
 * @throws Error for a field selector on any other field.
 */
export function compileScope(scope: ListWatchScope): ScopeMatcher {
  const labels = compileLabelSelector(
    scope.labelSelector === undefined ? undefined : parseSelectorString(scope.labelSelector)
  )
  const fields =
    scope.fieldSelector === undefined ? () => true : compileFieldSelector(scope.fieldSelector)
  const namespace = scope.namespace
  return (object) =>
    (namespace === undefined || object.metadata.namespace === namespace) &&
    labels(object.metadata.labels) &&
    fields(object)
}

/**
 * Translates one change of a stored object into what a scoped watch sees, as the API server
 * does: an object that enters the scope is ADDED, one that leaves it is DELETED.
 */
export function scopedEvent(
  type: 'ADDED' | 'MODIFIED' | 'DELETED',
  object: KubeObject,
  old: KubeObject | undefined,
  matches: ScopeMatcher
): WatchEvent | undefined {
  const now = matches(object)
  if (type !== 'MODIFIED') return now ? { type, object } : undefined
  const before = old !== undefined && matches(old)
  if (now) return { type: before ? 'MODIFIED' : 'ADDED', object }
  return before ? { type: 'DELETED', object } : undefined
}

/**
 * One open watch: a buffer the fake pushes into and an async iterable the informer pulls from.
 * The stream ends when its signal aborts or {@link WatchChannel.close} is called.
 */
export class WatchChannel implements AsyncIterable<WatchEvent> {
  readonly #buffer: WatchEvent[] = []
  #waiter: ((step: IteratorResult<WatchEvent>) => void) | undefined
  #closed = false
  readonly #onPull: () => void

  /** `onPull` is told of every event handed to the reader (the fake's activity counter). */
  constructor(signal: AbortSignal, onPull: () => void) {
    this.#onPull = onPull
    if (signal.aborted) this.close()
    else
      signal.addEventListener(
        'abort',
        () => {
          this.close()
        },
        { once: true }
      )
  }

  /** Whether the stream ended. */
  get closed(): boolean {
    return this.#closed
  }

  /** Events pushed but not yet read. */
  get pending(): number {
    return this.#buffer.length
  }

  /** Queues an event, or hands it to a waiting reader; ignored once closed. */
  push(event: WatchEvent): void {
    if (this.#closed) return
    // Each watcher gets its own copy, so no reader can change what another one (or the store) holds.
    const copy = { type: event.type, object: structuredClone(event.object) }
    const waiter = this.#waiter
    if (waiter !== undefined) {
      this.#waiter = undefined
      this.#onPull()
      waiter({ done: false, value: copy })
    } else {
      this.#buffer.push(copy)
    }
  }

  /** Ends the stream; buffered events are dropped, as when a connection closes. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#buffer.length = 0
    const waiter = this.#waiter
    this.#waiter = undefined
    waiter?.({ done: true, value: undefined })
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    return {
      next: () => {
        const event = this.#buffer.shift()
        if (event !== undefined) {
          this.#onPull()
          return Promise.resolve({ done: false, value: event })
        }
        if (this.#closed) return Promise.resolve({ done: true, value: undefined })
        return new Promise((resolve) => {
          this.#waiter = resolve
        })
      },
      return: () => {
        this.close()
        return Promise.resolve({ done: true, value: undefined })
      },
    }
  }
}
