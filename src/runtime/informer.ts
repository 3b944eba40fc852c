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
 *   Nothing unchanged is emitted again.
 * - Any other failure (network error, 5xx, a restarted API server) is retried forever with
 *   jittered exponential backoff; the backoff resets once a watch delivers an event.
 * - A watch that delivers nothing, not even a bookmark, for `idleTimeoutMs` is restarted, so a
 *   half-open connection cannot silently freeze the cache.
 * - A throwing handler is reported and skipped; it never stops the informer.
 *
 * **Caveats** Handlers run synchronously in event order; keep them short (enqueue a key).
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import { isJsonObject } from '../core/kube-object.js'
import { GoneError } from '../kube/api-error.js'
import { jitteredBackoffMs } from './backoff.js'
import type { JitteredBackoffOptions } from './backoff.js'
import { systemClock } from './clock.js'
import type { Clock } from './clock.js'
import type { ListWatcher } from './list-watcher.js'
import { ObjectStore, objectKey } from './object-store.js'
import type { ObjectReader } from './object-store.js'

/** Callbacks for cache changes. */
export interface InformerHandlers<T extends KubeObject = KubeObject> {
  onAdd?(object: T): void
  onUpdate?(oldObject: T, newObject: T): void
  /** Receives the last known state of the deleted object. */
  onDelete?(object: T): void
}

/** Why an informer relisted or restarted its watch, for metrics. */
export type InformerRestartReason = 'initial' | 'gone' | 'error' | 'idle' | 'closed'

/** Observes informer lifecycle events, for metrics and logs. */
export interface InformerObserver {
  onRelist?(description: string, reason: InformerRestartReason): void
  onWatchRestart?(description: string, reason: InformerRestartReason): void
  onError?(description: string, error: unknown, retryInMs: number): void
  onHandlerError?(description: string, error: unknown): void
}

/** Options of {@link Informer}. */
export interface InformerOptions {
  readonly clock?: Clock
  /** Objects per list page (500, as client-go). */
  readonly pageSize?: number
  /** Server-side watch timeout range; a random value in it spreads reconnects (300–600 s). */
  readonly watchTimeoutSeconds?: { readonly min: number; readonly max: number }
  /** Restarts a watch that delivered nothing for this long (150 s; bookmarks come about every minute). */
  readonly idleTimeoutMs?: number
  /** Retry backoff after failures (800 ms doubling to 30 s, 20 % jitter). */
  readonly backoff?: JitteredBackoffOptions
  readonly random?: () => number
  readonly observer?: InformerObserver
}

/** Raised by the informer loop for an in-stream watch `ERROR` other than 410. */
export class WatchStatusError extends Error {
  override readonly name = 'WatchStatusError'
  /** The `Status.code` of the error event. */
  readonly code: number | undefined
  constructor(message: string, code: number | undefined) {
    super(message)
    this.code = code
  }
}

type WatchOutcome =
  | { readonly kind: 'ended'; readonly resourceVersion: string; readonly sawEvent: boolean }
  | { readonly kind: 'gone' }

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

  constructor(source: ListWatcher<T>, options: InformerOptions = {}) {
    this.#source = source
    this.#options = options
    this.#clock = options.clock ?? systemClock
    this.#random = options.random ?? Math.random
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

  /** Starts the list-watch loop in the background; does nothing if it runs already. */
  start(): void {
    if (this.#loop !== undefined) return
    this.#abort = new AbortController()
    this.#loop = this.#run(this.#abort.signal)
  }

  /** Stops the loop and waits for it to end. The cache keeps its last state. */
  async stop(): Promise<void> {
    this.#abort?.abort(new Error('informer stopped'))
    await this.#loop
    this.#loop = undefined
  }

  async #run(signal: AbortSignal): Promise<void> {
    let resourceVersion: string | undefined
    let attempt = 0
    let reason: InformerRestartReason = 'initial'
    while (!signal.aborted) {
      try {
        if (resourceVersion === undefined) {
          this.#options.observer?.onRelist?.(this.description, reason)
          resourceVersion = await this.#relist(signal)
        }
        const outcome = await this.#watch(resourceVersion, signal)
        if (outcome.kind === 'gone') {
          resourceVersion = undefined
          reason = 'gone'
          continue
        }
        resourceVersion = outcome.resourceVersion
        if (outcome.sawEvent) attempt = 0
      } catch (error) {
        if (isAborted(signal)) break
        if (error instanceof GoneError) {
          resourceVersion = undefined
          reason = 'gone'
          continue
        }
        const delayMs = jitteredBackoffMs(attempt, {
          ...this.#options.backoff,
          random: this.#random,
        })
        attempt = Math.min(attempt + 1, 30)
        this.#options.observer?.onError?.(this.description, error, delayMs)
        this.#watchRestarts++
        this.#options.observer?.onWatchRestart?.(this.description, 'error')
        await this.#sleep(delayMs, signal)
      }
    }
  }

  async #relist(signal: AbortSignal): Promise<string> {
    const pageSize = this.#options.pageSize ?? 500
    const items: T[] = []
    let token: string | undefined
    let resourceVersion: string | undefined
    for (;;) {
      let page
      try {
        page = await this.#source.listPage({
          limit: pageSize,
          signal,
          ...(token === undefined ? {} : { continue: token }),
        })
      } catch (error) {
        // An expired continue token means the snapshot is gone: start the list over.
        if (error instanceof GoneError && token !== undefined) {
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
    this.#replace(items)
    this.#touch()
    if (!this.#synced) {
      this.#synced = true
      for (const waiter of this.#syncWaiters) waiter()
      this.#syncWaiters.clear()
    }
    return resourceVersion
  }

  // Applied in one synchronous pass, so no reader ever sees half of a relist.
  #replace(items: readonly T[]): void {
    const seen = new Set<string>()
    for (const item of items) {
      const key = objectKey(item)
      seen.add(key)
      this.#apply(item)
    }
    for (const object of this.#store.list()) {
      const key = objectKey(object)
      if (!seen.has(key)) {
        this.#store.remove(key)
        this.#emit((h) => h.onDelete?.(object))
      }
    }
  }

  #apply(object: T): void {
    const old = this.#store.get(objectKey(object))
    if (old?.metadata.resourceVersion === object.metadata.resourceVersion && old !== undefined) {
      return
    }
    this.#store.upsert(object)
    if (old === undefined) this.#emit((h) => h.onAdd?.(object))
    else this.#emit((h) => h.onUpdate?.(old, object))
  }

  async #watch(resourceVersion: string, outer: AbortSignal): Promise<WatchOutcome> {
    const range = this.#options.watchTimeoutSeconds ?? { min: 300, max: 600 }
    const timeoutSeconds = Math.round(range.min + (range.max - range.min) * this.#random())
    const idleTimeoutMs = this.#options.idleTimeoutMs ?? 150_000
    const controller = new AbortController()
    const onOuterAbort = (): void => {
      controller.abort(outer.reason)
    }
    outer.addEventListener('abort', onOuterAbort, { once: true })
    const idleReason = new Error('watch idle')
    let timer = this.#clock.setTimeout(() => undefined, 0)
    const armIdle = (): void => {
      this.#clock.clearTimeout(timer)
      timer = this.#clock.setTimeout(() => {
        controller.abort(idleReason)
      }, idleTimeoutMs)
    }
    let current = resourceVersion
    let sawEvent = false
    try {
      armIdle()
      const events = await this.#source.watch({
        resourceVersion,
        timeoutSeconds,
        signal: controller.signal,
      })
      for await (const event of events) {
        armIdle()
        this.#touch()
        sawEvent = true
        switch (event.type) {
          case 'ADDED':
          case 'MODIFIED':
            this.#apply(event.object as T)
            break
          case 'DELETED': {
            const old = this.#store.remove(objectKey(event.object))
            const last = (event.object as T | undefined) ?? old
            if (last !== undefined) this.#emit((h) => h.onDelete?.(last))
            break
          }
          case 'BOOKMARK':
            break
          case 'ERROR': {
            const code = isJsonObject(event.object) ? event.object['code'] : undefined
            if (code === 410) return { kind: 'gone' }
            const message = event.object['message']
            throw new WatchStatusError(
              `watch of ${this.description} failed: ${typeof message === 'string' ? message : 'unknown error'}`,
              typeof code === 'number' ? code : undefined
            )
          }
          default: {
            const unreachable: never = event.type
            throw new Error(`unexpected watch event ${String(unreachable)}`)
          }
        }
        const rv = event.object.metadata.resourceVersion
        if (rv !== undefined && rv !== '') current = rv
      }
      return { kind: 'ended', resourceVersion: current, sawEvent }
    } catch (error) {
      if (controller.signal.reason === idleReason && !outer.aborted) {
        this.#watchRestarts++
        this.#options.observer?.onWatchRestart?.(this.description, 'idle')
        return { kind: 'ended', resourceVersion: current, sawEvent }
      }
      throw error
    } finally {
      this.#clock.clearTimeout(timer)
      outer.removeEventListener('abort', onOuterAbort)
      controller.abort(new Error('watch finished'))
    }
  }

  #touch(): void {
    this.#lastEventAt = this.#clock.now()
  }

  #emit(call: (handlers: InformerHandlers<T>) => void): void {
    for (const handlers of this.#handlers) {
      this.#call(() => {
        call(handlers)
      })
    }
  }

  #call(fn: () => void): void {
    try {
      fn()
    } catch (error) {
      this.#options.observer?.onHandlerError?.(this.description, error)
    }
  }

  #sleep(ms: number, signal: AbortSignal): Promise<void> {
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

// The loop's `signal.aborted` changes while it awaits; a call keeps the compiler from narrowing it.
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted
}
