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
import { isJsonObject } from '../../core/kube-object.js'
import { GoneError } from '../../kube/api-error.js'
import type { WatchEvent } from '../../kube/watch-event.js'
import { jitteredBackoffMs } from '../rate-limit/backoff.js'
import type { JitteredBackoffOptions } from '../rate-limit/backoff.js'
import { systemClock } from '../clock/clock.js'
import { isAborted } from '../clock/is-aborted.js'
import type { Clock, TimerHandle } from '../clock/clock.js'
import type { ListWatcher } from './list-watcher.js'
import { ObjectStore } from './object-store.js'
import type { ObjectReader } from './object-store.js'

/** Callbacks for cache changes. */
export interface InformerHandlers<T extends KubeObject = KubeObject> {
  /** Receives an object that entered the cache. */
  onAdd?(object: T): void
  /** Receives the cached object and the one that replaced it (a newer resourceVersion). */
  onUpdate?(oldObject: T, newObject: T): void
  /** Receives the last known state of the deleted object. */
  onDelete?(object: T): void
}

/**
 * Why an informer relisted or restarted its watch, for metrics: `initial` (the first list),
 * `gone` (410), `error` (any other failure), `idle` (the watchdog fired) or `closed` (a watch
 * ended without delivering anything).
 */
export type InformerRestartReason = 'initial' | 'gone' | 'error' | 'idle' | 'closed'

/** Observes informer lifecycle events, for metrics and logs; exceptions it throws are ignored. */
export interface InformerObserver {
  /** Called before each list, the first one included. */
  onRelist?(description: string, reason: InformerRestartReason): void
  /** Called when a watch is reopened for a reason other than a normal server timeout. */
  onWatchRestart?(description: string, reason: InformerRestartReason): void
  /** Called for each failure that is retried after `retryInMs`. */
  onError?(description: string, error: unknown, retryInMs: number): void
  /** Called when a handler throws; the informer goes on with the next handler. */
  onHandlerError?(description: string, error: unknown): void
}

/** Options of {@link Informer}. */
export interface InformerOptions {
  /** Clock for backoff and the idle watchdog ({@link systemClock}). */
  readonly clock?: Clock
  /** Objects per list page (500, as client-go). */
  readonly pageSize?: number
  /** Server-side watch timeout range; a random value in it spreads reconnects (300–600 s). */
  readonly watchTimeoutSeconds?: { readonly min: number; readonly max: number }
  /** Restarts a watch that delivered nothing for this long (150 s; bookmarks come about every minute). */
  readonly idleTimeoutMs?: number
  /** Retry backoff after failures (800 ms doubling to 30 s, 20 % jitter). */
  readonly backoff?: JitteredBackoffOptions
  /** Source of uniform numbers in [0, 1) for jitter and watch timeouts (`Math.random`). */
  readonly random?: () => number
  /** Receives lifecycle events. */
  readonly observer?: InformerObserver
  /**
   * Rewrites each object before it is cached and handed to handlers, e.g.
   * {@link stripManagedFields} to save memory. It must keep `metadata.name`, `namespace` and
   * `resourceVersion`.
   */
  readonly transform?: (object: KubeObject) => KubeObject
}

/**
 * Drops `metadata.managedFields`, which is often a third of an object's size and is only read by
 * server-side apply on the server (controller-runtime offers the same transform).
 */
export function stripManagedFields(object: KubeObject): KubeObject {
  if (!('managedFields' in object.metadata)) return object
  const metadata = { ...object.metadata }
  delete metadata['managedFields']
  return { ...object, metadata }
}

/** Raised by the informer loop for an in-stream watch `ERROR` other than 410. */
export class WatchStatusError extends Error {
  override readonly name = 'WatchStatusError'
  /** The `Status.code` of the error event. */
  readonly code: number | undefined
  /** Creates the error for a `Status` with this message and code. */
  constructor(message: string, code: number | undefined) {
    super(message)
    this.code = code
  }
}

/** How many times one list restarts after an expired continue token before it counts as failed. */
const maxListRestarts = 3

type WatchOutcome =
  /** The stream ended after delivering events: a normal server-side timeout. */
  | { readonly kind: 'ended' }
  /** The stream ended without delivering anything. */
  | { readonly kind: 'closed' }
  /** The idle watchdog fired. */
  | { readonly kind: 'idle' }
  /** The stream reported 410. */
  | { readonly kind: 'gone'; readonly error: WatchStatusError }

type HandlerCall<T extends KubeObject> = (handlers: InformerHandlers<T>) => void

/** Keeps an {@link ObjectReader} cache of one collection current and reports its changes. */
export class Informer<T extends KubeObject = KubeObject> {
  readonly #source: ListWatcher<T>
  readonly #store = new ObjectStore<T>()
  readonly #handlers = new Set<InformerHandlers<T>>()
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
    const { pageSize, idleTimeoutMs, watchTimeoutSeconds } = options
    if (pageSize !== undefined && !(Number.isInteger(pageSize) && pageSize > 0)) {
      throw new RangeError(`pageSize must be a positive integer, got ${pageSize}`)
    }
    if (idleTimeoutMs !== undefined && !(idleTimeoutMs > 0)) {
      throw new RangeError(`idleTimeoutMs must be positive, got ${idleTimeoutMs}`)
    }
    if (
      watchTimeoutSeconds !== undefined &&
      !(watchTimeoutSeconds.min >= 0 && watchTimeoutSeconds.max >= watchTimeoutSeconds.min)
    ) {
      throw new RangeError('watchTimeoutSeconds needs 0 <= min <= max')
    }
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
    this.#handlers.add(handlers)
    if (this.#synced) {
      for (const object of this.#store.list()) this.#call(() => handlers.onAdd?.(object))
    }
    return () => {
      this.#handlers.delete(handlers)
    }
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
    const pageSize = this.#options.pageSize ?? 500
    const items: T[] = []
    let token: string | undefined
    let resourceVersion: string | undefined
    let restarts = 0
    for (;;) {
      let page
      try {
        page = await untilAborted(
          this.#source.listPage({
            limit: pageSize,
            signal,
            ...(token === undefined ? {} : { continue: token }),
          }),
          signal
        )
      } catch (error) {
        // An expired continue token means the snapshot is gone: start the list over.
        if (error instanceof GoneError && token !== undefined && restarts < maxListRestarts) {
          restarts++
          items.length = 0
          token = undefined
          continue
        }
        throw error
      }
      items.push(...page.items)
      resourceVersion = page.metadata.resourceVersion ?? ''
      token = page.metadata.continue
      if (token === undefined || token === '') break
    }
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
    this.#emit(calls)
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
    this.#emit([old === undefined ? (h) => h.onAdd?.(object) : (h) => h.onUpdate?.(old, object)])
  }

  async #watch(resourceVersion: string, outer: AbortSignal): Promise<WatchOutcome> {
    const range = this.#options.watchTimeoutSeconds ?? { min: 300, max: 600 }
    const timeoutSeconds = Math.round(range.min + (range.max - range.min) * this.#random())
    const idleTimeoutMs = this.#options.idleTimeoutMs ?? 150_000
    const controller = new AbortController()
    const onOuterAbort = (): void => {
      controller.abort(outer.reason)
    }
    // A stop that came while the list was finishing must not let a watch open.
    if (outer.aborted) onOuterAbort()
    else outer.addEventListener('abort', onOuterAbort, { once: true })
    const idleReason = new Error('watch idle')
    let timer: TimerHandle | undefined
    const armIdle = (): void => {
      if (timer !== undefined) this.#clock.clearTimeout(timer)
      timer = this.#clock.setTimeout(() => {
        controller.abort(idleReason)
      }, idleTimeoutMs)
    }
    let iterator: AsyncIterator<WatchEvent> | undefined
    let sawEvent = false
    try {
      armIdle()
      const events = await untilAborted(
        this.#source.watch({ resourceVersion, timeoutSeconds, signal: controller.signal }),
        controller.signal
      )
      iterator = events[Symbol.asyncIterator]()
      for (;;) {
        // Raced against the signal, so a stream that ignores its abort cannot hold the loop.
        const step = await untilAborted(iterator.next(), controller.signal)
        if (step.done === true) {
          iterator = undefined
          break
        }
        const event = step.value
        if (event.type === 'ERROR') {
          const error = this.#watchStatusError(event.object)
          if (error.code === 410) return { kind: 'gone', error }
          throw error
        }
        armIdle()
        this.#touch()
        if (!sawEvent) {
          sawEvent = true
          this.#failures = 0
          this.#gones = 0
        }
        this.#applyEvent(event)
        const rv = event.object.metadata.resourceVersion
        if (rv !== undefined && rv !== '') this.#resourceVersion = rv
      }
      return { kind: sawEvent ? 'ended' : 'closed' }
    } catch (error) {
      if (controller.signal.reason === idleReason && !outer.aborted) return { kind: 'idle' }
      throw error
    } finally {
      if (timer !== undefined) this.#clock.clearTimeout(timer)
      outer.removeEventListener('abort', onOuterAbort)
      controller.abort(new Error('watch finished'))
      if (iterator !== undefined) closeIterator(iterator)
    }
  }

  /** The error an `ERROR` watch event carries. */
  #watchStatusError(object: unknown): WatchStatusError {
    const code = isJsonObject(object) ? object['code'] : undefined
    const message = isJsonObject(object) ? object['message'] : undefined
    return new WatchStatusError(
      `watch of ${this.description} failed: ${typeof message === 'string' ? message : 'unknown error'}`,
      typeof code === 'number' ? code : undefined
    )
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
        this.#emit([(h) => h.onDelete?.(last)])
        break
      }
      case 'BOOKMARK':
        break
      case 'ERROR':
        throw this.#watchStatusError(event.object)
      default: {
        const unreachable: never = event.type
        throw new Error(`unexpected watch event ${String(unreachable)}`)
      }
    }
  }

  #touch(): void {
    this.#lastEventAt = this.#clock.now()
  }

  /** Runs each call for the handlers subscribed now that are still subscribed when it runs. */
  #emit(calls: readonly HandlerCall<T>[]): void {
    if (calls.length === 0) return
    const handlers = [...this.#handlers]
    for (const call of calls) {
      for (const handler of handlers) {
        if (!this.#handlers.has(handler)) continue
        this.#call(() => {
          call(handler)
        })
      }
    }
  }

  #call(fn: () => void): void {
    try {
      fn()
    } catch (error) {
      this.#notify((observer) => observer.onHandlerError?.(this.description, error))
    }
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
    if (signal.aborted) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = this.#clock.setTimeout(() => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      }, ms)
      const onAbort = (): void => {
        this.#clock.clearTimeout(timer)
        resolve()
      }
      signal.addEventListener('abort', onAbort, { once: true })
    })
  }
}

/** Settles as `promise` does, or rejects with the signal's reason as soon as `signal` aborts. */
function untilAborted<V>(promise: Promise<V>, signal: AbortSignal): Promise<V> {
  return new Promise<V>((resolve, reject) => {
    const onAbort = (): void => {
      reject(signal.reason as Error)
    }
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
    promise
      .finally(() => {
        signal.removeEventListener('abort', onAbort)
      })
      .then(resolve, reject)
  })
}

/** Asks an abandoned stream to release its resources, without waiting for it. */
function closeIterator(iterator: AsyncIterator<unknown>): void {
  try {
    void Promise.resolve(iterator.return?.()).catch(() => undefined)
  } catch {
    // A stream whose return() throws is abandoned all the same.
  }
}
