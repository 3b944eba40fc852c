/**
 * Informers: a cache of one collection kept current by list-then-watch, that never gives up.
 *
 * @remarks
 * **Expected flow** List (paginated) → watch with bookmarks from the list's resourceVersion →
 * on a normal end of the watch, watch again from the last resourceVersion seen (event or bookmark).
 * With `watchList` (the default) and a {@link ListWatcher} that offers it, the list is a streaming
 * one instead (KEP-3157): one watch whose initial events fill a fresh store until the bookmark
 * annotated `k8s.io/initial-events-end`, when that store is swapped in as a list would be, and the
 * same watch goes on from that bookmark. A server that refuses it (422 or 400, or a stream that
 * ends without that bookmark) is remembered in `watchListFallback`, and the informer lists.
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
import { listAllPages } from './list-all-pages.js'
import type { ListWatcher } from './list-watcher.js'
import { ObjectStore } from './object-store.js'
import type { ObjectReader } from './object-store.js'
import { watchOnce } from './watch-once.js'
import type { WatchOutcome } from './watch-once.js'
import { applyWatchEvent } from './apply-watch-event.js'
import { SyncLatch } from './sync-latch.js'
import { InitialEvents, InitialEventsIgnoredError, isWatchListRefusal } from './initial-events.js'
import { replaceStore } from './replace-store.js'
import { watchListFallback } from './watch-list-fallbacks.js'
import type { WatchListFallback } from './watch-list-fallbacks.js'

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
  readonly #fallback: WatchListFallback
  #abort: AbortController | undefined
  #loop: Promise<void> | undefined
  readonly #synced = new SyncLatch()
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
    this.#fallback = options.watchListFallback ?? watchListFallback()
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
    return this.#synced.isOpen
  }

  /**
   * Milliseconds since the last list page or watch event (bookmarks count); undefined before any.
   */
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
    return this.#handlers.subscribe(handlers, this.#synced.isOpen ? this.#store.list() : [])
  }

  /** Resolves once the cache is synced; rejects when `signal` aborts first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    return this.#synced.wait(signal)
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
        let outcome: WatchOutcome | undefined
        if (this.#resourceVersion === undefined) {
          const why = reason
          this.#notify((observer) => observer.onRelist?.(this.description, why))
          // Undefined when not streamed, or refused: the list below is this relist.
          outcome = this.#streamsLists() ? await this.#streamList(signal) : undefined
          if (outcome === undefined) {
            listing = true
            this.#resourceVersion = await this.#relist(signal)
            listing = false
          }
        }
        outcome ??= await this.#watch(this.#resourceVersion ?? '', signal)
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
      signal,
      () => {
        this.#touch()
      }
    )
    this.#relists++
    this.#replace(items.map((raw) => this.#transform(raw)))
    return resourceVersion
  }

  /** Brings the cache to `items` (transformed) in one synchronous pass, then emits the difference. */
  #replace(items: Iterable<T>): void {
    const calls = replaceStore(this.#store, items)
    // Opened before the handlers run, so a handler subscribing meanwhile gets the whole cache;
    // waiters resume in a later microtask, after the handlers.
    this.#synced.open()
    this.#handlers.emit(calls)
  }

  #streamsLists(): boolean {
    return (
      this.#options.watchList !== false &&
      this.#source.watchList !== undefined &&
      !this.#fallback.refused
    )
  }

  /**
   * A streaming list: the initial events fill a fresh store, swapped in at the end bookmark, and
   * the same watch goes on. Before that bookmark a refusal turns this resource to listing:
   * undefined, so the loop lists at once.
   */
  async #streamList(signal: AbortSignal): Promise<WatchOutcome | undefined> {
    const initial = new InitialEvents<T>((object) => this.#transform(object))
    // An object, not a let: the event callback turns it, which flow analysis cannot see.
    const phase = { initial: true }
    try {
      const outcome = await this.#watchEvents(undefined, signal, (event) => {
        if (!phase.initial) return false
        const resourceVersion = initial.take(event)
        if (resourceVersion === undefined) return true
        phase.initial = false
        this.#relists++
        this.#replace(initial.items())
        this.#resourceVersion = resourceVersion
        return true
      })
      if (phase.initial && outcome.kind === 'ended') {
        throw new InitialEventsIgnoredError(
          `watch of ${this.description} ended before the end of its initial events: the API server ignores sendInitialEvents`
        )
      }
      return outcome
    } catch (error) {
      if (!phase.initial || !isWatchListRefusal(error) || isAborted(signal)) throw error
      this.#fallback.refuse()
      this.#notify((observer) => observer.onWatchListFallback?.(this.description, error))
      return undefined
    }
  }

  #transform(object: T): T {
    const transform = this.#options.transform
    return transform === undefined ? object : (transform(object) as T)
  }

  #watch(resourceVersion: string, outer: AbortSignal): Promise<WatchOutcome> {
    return this.#watchEvents(resourceVersion, outer, () => false)
  }

  /**
   * One watch from `resourceVersion` (undefined: a streaming list); `initial` sees each event
   * first and returns true when it took it, so it is not applied to the cache.
   */
  #watchEvents(
    resourceVersion: string | undefined,
    outer: AbortSignal,
    initial: (event: WatchEvent) => boolean
  ): Promise<WatchOutcome> {
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
      if (initial(event)) return
      const call = applyWatchEvent(this.#store, event, (o) => this.#transform(o), this.description)
      if (call !== undefined) this.#handlers.emit([call])
      const rv = event.object.metadata.resourceVersion
      if (rv !== undefined && rv !== '') this.#resourceVersion = rv
    })
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
