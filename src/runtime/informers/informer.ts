/**
 * Informers: a cache of one collection kept current by list-then-watch, that never gives up.
 *
 * @remarks
 * **Expected flow** List (paginated) → watch with bookmarks from the list's resourceVersion →
 * on a normal end of the watch, watch again from the last resourceVersion seen (event or bookmark).
 *
 * **Guarantees**
 * - On 410 Gone (HTTP or an in-stream `ERROR`), the informer relists and emits exactly the
 *   difference against its cache: adds for new objects, `update(old, new)` for objects whose
 *   resourceVersion changed, deletes (with the last known object) for objects that vanished.
 *   Nothing unchanged is emitted again. A 410 relists at once unless it directly follows another
 *   410 (a relist, then a watch answered 410 again before any event or other failure): only 410s
 *   in a row wait for the backoff, so a server that keeps answering 410 is not hammered, and a
 *   quiet informer is not held back after an API server restart. An expired continue token restarts the list from its first page (three
 *   times at most, then the list counts as failed).
 * - Handlers see a list as one batch: the cache holds the whole list before the first handler
 *   of that list runs, so no reader ever sees half of a relist.
 * - Any other failure (network error, 5xx, a restarted API server) is retried forever with
 *   jittered exponential backoff; the watch resumes from the last resourceVersion seen. The
 *   backoff resets once a watch delivers an event (an in-stream `ERROR` does not count). A watch
 *   that closes without delivering anything counts as a failure too, so a proxy that closes
 *   connections at once cannot make the informer spin.
 * - A watch that delivers nothing, not even a bookmark, for `idleTimeoutMs` is restarted, so a
 *   half-open connection cannot silently freeze the cache; this holds even when the
 *   {@link ListWatcher} ignores its abort signal.
 * - `stop()` ends the loop promptly wherever it waits (list, watch, backoff), also when the
 *   {@link ListWatcher} ignores its abort signal.
 * - A throwing handler is reported to `onHandlerError` and skipped; a throwing observer is
 *   ignored. Neither stops the informer.
 *
 * **Caveats** Handlers run synchronously in event order; keep them short (enqueue a key).
 *
 * @module
 */
import { objectKey } from '../../core/object-key.js'
import type { KubeObject } from '../../core/kube-object.js'
import { GoneError } from '../../kube/api-error.js'
import type { WatchEvent } from '../../kube/watch-event.js'
import { jitteredBackoffMs } from '../rate-limit/backoff.js'
import type { JitteredBackoffOptions } from '../rate-limit/backoff.js'
import { abortableSleep } from '../clock/abortable-sleep.js'
import { systemClock } from '../clock/clock.js'
import { isAborted } from '../clock/is-aborted.js'
import type { Clock } from '../clock/clock.js'
import { checkInformerOptions } from './informer-options.js'
import type {
  InformerHandlers,
  InformerObserver,
  InformerOptions,
  InformerRestartReason,
} from './informer-options.js'
import { HandlerFanOut } from './handler-fan-out.js'
import type { HandlerCall } from './handler-fan-out.js'
import { listAllPages } from './list-all-pages.js'
import type { ListWatcher } from './list-watcher.js'
import { ObjectStore } from './object-store.js'
import type { ObjectReader } from './object-store.js'
import { watchOnce } from './watch-once.js'
import type { WatchOutcome } from './watch-once.js'
import { watchStatusError } from './watch-status-error.js'

// The informer's vocabulary lives beside it; its many importers keep importing it from here.
export type {
  InformerHandlers,
  InformerObserver,
  InformerOptions,
  InformerRestartReason,
} from './informer-options.js'
export { stripManagedFields } from './informer-options.js'
export { WatchStatusError } from './watch-status-error.js'

/** Keeps an {@link ObjectReader} cache of one collection current and reports its changes. */
export class Informer<T extends KubeObject = KubeObject> {
  readonly #source: ListWatcher<T>
  readonly #store = new ObjectStore<T>()
  readonly #handlers = new HandlerFanOut<T>((error) => {
    this.#notify((observer) => observer.onHandlerError?.(this.description, error))
  })
  readonly #clock: Clock
  readonly #options: InformerOptions
  readonly #random: () => number
  #abort: AbortController | undefined
  #loop: Promise<void> | undefined
  #synced = false
  readonly #syncWaiters = new Set<() => void>()
  #lastEventAt: number | undefined
  #relists = 0
  #watchRestarts = 0
  /** Where the next watch starts; undefined when the next step is a list. */
  #resourceVersion: string | undefined
  /** Consecutive failures, the backoff attempt; reset by a watch event. */
  #failures = 0
  /** 410s in a row: reset by a watch event and by any watch that ended otherwise. */
  #gones = 0

  /** Creates a stopped informer over `source`; throws a RangeError for invalid options. */
  constructor(source: ListWatcher<T>, options: InformerOptions = {}) {
    this.#source = source
    this.#options = options
    this.#clock = options.clock ?? systemClock
    this.#random = options.random ?? Math.random
    checkInformerOptions(options)
    // Checks the backoff options now: a RangeError inside the loop would end it.
    jitteredBackoffMs(0, this.#backoffOptions())
  }

  /** The collection this informer caches. */
  get description(): string {
    return this.#source.description
  }

  /** The cache. */
  get store(): ObjectReader<T> {
    return this.#store
  }

  /** How many lists this informer has done (the initial one included). */
  get relists(): number {
    return this.#relists
  }

  /** How many times a watch was reopened for a reason other than a normal server timeout. */
  get watchRestarts(): number {
    return this.#watchRestarts
  }

  /** Tells whether the first list has been applied to the cache. */
  hasSynced(): boolean {
    return this.#synced
  }

  /** Milliseconds since the last list or watch event (bookmarks count); undefined before any. */
  lastEventAgeMs(): number | undefined {
    return this.#lastEventAt === undefined ? undefined : this.#clock.now() - this.#lastEventAt
  }

  /**
   * Adds handlers; when the cache is already synced, `onAdd` is called at once for each cached
   * object, so a late subscriber sees the same world as an early one. Returns an unsubscribe.
   *
   * @remarks
   * A subscriber added while handlers run gets the cache as it is then, and only the changes
   * that come after: never a change twice.
   */
  subscribe(handlers: InformerHandlers<T>): () => void {
    return this.#handlers.subscribe(handlers, this.#synced ? this.#store.list() : [])
  }

  /** Resolves once the cache is synced; rejects when `signal` aborts first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const done = (): void => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }
      const onAbort = (): void => {
        this.#syncWaiters.delete(done)
        reject(signal?.reason as Error)
      }
      if (signal?.aborted === true) {
        onAbort()
        return
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#syncWaiters.add(done)
    })
  }

  /**
   * Starts the list-watch loop in the background; does nothing if it runs already. Started
   * while a stop is in progress, the new loop begins once the old one has ended.
   */
  start(): void {
    if (this.#abort !== undefined && !this.#abort.signal.aborted) return
    const abort = new AbortController()
    this.#abort = abort
    const previous = this.#loop
    this.#loop =
      previous === undefined
        ? this.#run(abort.signal)
        : previous.then(() => this.#run(abort.signal))
  }

  /** Stops the loop and waits for it to end. The cache keeps its last state. */
  async stop(): Promise<void> {
    const loop = this.#loop
    this.#abort?.abort(new Error('informer stopped'))
    await loop
    if (this.#loop === loop) this.#loop = undefined
  }

  async #run(signal: AbortSignal): Promise<void> {
    this.#resourceVersion = undefined
    this.#failures = 0
    this.#gones = 0
    let reason: InformerRestartReason = 'initial'
    while (!signal.aborted) {
      let listing = false
      try {
        if (this.#resourceVersion === undefined) {
          listing = true
          const why = reason
          this.#notify((observer) => observer.onRelist?.(this.description, why))
          this.#resourceVersion = await this.#relist(signal)
          listing = false
        }
        const outcome = await this.#watch(this.#resourceVersion, signal)
        // Only a 410 that directly follows a 410 waits: one after a watch that ended any other
        // way (a timeout, a dropped connection of a restarting API server) relists at once.
        if (outcome.kind !== 'gone') this.#gones = 0
        switch (outcome.kind) {
          case 'ended':
            break
          case 'closed':
            this.#restarted('closed')
            await this.#sleep(this.#backoffMs(), signal)
            break
          case 'idle':
            this.#restarted('idle')
            break
          case 'gone':
            reason = 'gone'
            await this.#onGone(outcome.error, signal)
            break
          default: {
            const unreachable: never = outcome
            throw new Error(`unexpected watch outcome ${String(unreachable)}`)
          }
        }
      } catch (error) {
        if (isAborted(signal)) break
        // Only a watch's 410 calls for a relist; a list's own 410 is a failure like any other.
        if (error instanceof GoneError && !listing) {
          reason = 'gone'
          await this.#onGone(error, signal)
          continue
        }
        this.#gones = 0
        const delayMs = this.#backoffMs()
        this.#notify((observer) => observer.onError?.(this.description, error, delayMs))
        this.#restarted('error')
        await this.#sleep(delayMs, signal)
      }
    }
  }

  async #onGone(error: unknown, signal: AbortSignal): Promise<void> {
    this.#resourceVersion = undefined
    if (this.#gones++ === 0) return
    const delayMs = this.#backoffMs()
    this.#notify((observer) => observer.onError?.(this.description, error, delayMs))
    await this.#sleep(delayMs, signal)
  }

  #restarted(reason: InformerRestartReason): void {
    this.#watchRestarts++
    this.#notify((observer) => observer.onWatchRestart?.(this.description, reason))
  }

  #backoffOptions(): JitteredBackoffOptions {
    const backoff = this.#options.backoff
    return { ...backoff, random: backoff?.random ?? this.#random }
  }

  /** Returns the delay before the next retry and counts the failure. */
  #backoffMs(): number {
    const delayMs = jitteredBackoffMs(this.#failures, this.#backoffOptions())
    this.#failures = Math.min(this.#failures + 1, 30)
    return delayMs
  }

  async #relist(signal: AbortSignal): Promise<string> {
    const { items, resourceVersion } = await listAllPages(
      this.#source,
      this.#options.pageSize ?? 500,
      signal
    )
    this.#relists++
    this.#touch()
    this.#replace(items)
    return resourceVersion
  }

  /** Brings the cache to `items` in one synchronous pass, then emits the difference. */
  #replace(items: readonly T[]): void {
    const calls: HandlerCall<T>[] = []
    const seen = new Set<string>()
    for (const raw of items) {
      const item = this.#transform(raw)
      const key = objectKey(item)
      seen.add(key)
      const old = this.#store.get(key)
      if (old?.metadata.resourceVersion === item.metadata.resourceVersion && old !== undefined) {
        continue
      }
      this.#store.upsert(item)
      calls.push(old === undefined ? (h) => h.onAdd?.(item) : (h) => h.onUpdate?.(old, item))
    }
    for (const object of this.#store.list()) {
      const key = objectKey(object)
      if (!seen.has(key)) {
        this.#store.remove(key)
        calls.push((h) => h.onDelete?.(object))
      }
    }
    // Marked before the handlers run, so a handler subscribing meanwhile gets the whole cache.
    const first = !this.#synced
    this.#synced = true
    this.#handlers.emit(calls)
    if (first) {
      for (const waiter of this.#syncWaiters) waiter()
      this.#syncWaiters.clear()
    }
  }

  #transform(object: T): T {
    const transform = this.#options.transform
    return transform === undefined ? object : (transform(object) as T)
  }

  #apply(raw: T): void {
    const object = this.#transform(raw)
    const old = this.#store.get(objectKey(object))
    if (old?.metadata.resourceVersion === object.metadata.resourceVersion && old !== undefined) {
      return
    }
    this.#store.upsert(object)
    this.#handlers.emit([
      old === undefined ? (h) => h.onAdd?.(object) : (h) => h.onUpdate?.(old, object),
    ])
  }

  async #watch(resourceVersion: string, outer: AbortSignal): Promise<WatchOutcome> {
    const range = this.#options.watchTimeoutSeconds ?? { min: 300, max: 600 }
    const timeoutSeconds = Math.round(range.min + (range.max - range.min) * this.#random())
    const idleTimeoutMs = this.#options.idleTimeoutMs ?? 150_000
    const options = { resourceVersion, timeoutSeconds, idleTimeoutMs, clock: this.#clock }
    return watchOnce(this.#source, options, outer, (event, first) => {
      this.#touch()
      if (first) {
        this.#failures = 0
        this.#gones = 0
      }
      this.#applyEvent(event)
      const rv = event.object.metadata.resourceVersion
      if (rv !== undefined && rv !== '') this.#resourceVersion = rv
    })
  }

  /** Applies one watch event (not an `ERROR`) to the cache and tells the handlers. */
  #applyEvent(event: WatchEvent): void {
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED':
        this.#apply(event.object as T)
        break
      case 'DELETED': {
        // The event carries the object's final state, which is the last known one.
        const last = this.#transform(event.object as T)
        this.#store.remove(objectKey(last))
        this.#handlers.emit([(h) => h.onDelete?.(last)])
        break
      }
      case 'BOOKMARK':
        break
      case 'ERROR':
        throw watchStatusError(this.description, event.object)
      default: {
        const unreachable: never = event.type
        throw new Error(`unexpected watch event ${String(unreachable)}`)
      }
    }
  }

  #touch(): void {
    this.#lastEventAt = this.#clock.now()
  }

  #notify(report: (observer: InformerObserver) => void): void {
    const observer = this.#options.observer
    if (observer === undefined) return
    try {
      report(observer)
    } catch {
      // Observers feed metrics and logs; a bug in one must not stop the informer.
    }
  }

  #sleep(ms: number, signal: AbortSignal): Promise<void> {
    return abortableSleep(ms, signal, this.#clock)
  }
}
