import { ExponentialBackoff } from '../rate-limit/backoff.js'
import { systemClock, type Clock, type TimerHandle } from '../clock/clock.js'
import { TokenBucket } from '../rate-limit/token-bucket.js'
import { QueueLane } from './queue-lane.js'
import { noopWorkQueueMetrics, type WorkQueueMetrics } from './work-queue-metrics.js'

/**
 * Names the lane a key waits in: `high` for keys that carry news (watch events, new objects),
 * `low` for keys that only re-check (resyncs, retries, `resyncAfterSeconds`).
 */
export type WorkQueuePriority = 'high' | 'low'

/** Options of one add to a {@link WorkQueue}. */
export interface WorkQueueAddOptions {
  /** Lane to queue the key in (`high` for {@link WorkQueue.add}, `low` for delayed adds). */
  readonly priority?: WorkQueuePriority
}

/** Options of {@link WorkQueue}. */
export interface WorkQueueOptions<K extends string = string> {
  /** Identifies the queue in metrics and logs (empty). */
  readonly name?: string
  /** Time source for delays and measured durations ({@link systemClock}). */
  readonly clock?: Clock
  /** Receives the queue's events ({@link noopWorkQueueMetrics}). */
  readonly metrics?: WorkQueueMetrics
  /** Per-key failure back-off of {@link WorkQueue.addRateLimited} (5 ms doubling to 1000 s). */
  readonly backoff?: ExponentialBackoff<K>
  /**
   * Overall limit of {@link WorkQueue.addRateLimited} across keys (10 qps, burst 100, on the
   * queue's clock); pass a bucket with `qps: Infinity` to rely on the per-key back-off alone.
   */
  readonly bucket?: TokenBucket
  /**
   * How many high-priority keys {@link WorkQueue.get} hands out in a row while low-priority keys
   * wait, before it hands out one of those (4; `Infinity` for strict priority, which can starve
   * the low lane).
   */
  readonly highBurst?: number
}

/** Where a pending key will be queued, and since when it has been pending (for metrics). */
interface PendingKey {
  priority: WorkQueuePriority
  readonly since: number
}

/** A delayed add waiting for its timer. */
interface DelayedKey {
  readonly readyAt: number
  priority: WorkQueuePriority
  readonly timer: TimerHandle
}

/** A caller of {@link WorkQueue.get} waiting for a key; `undefined` tells it the queue shut down. */
interface Getter<K> {
  readonly hand: (key: K | undefined) => void
}

/** Resolves a waiting get whose signal aborted, so that the abort is rethrown by the caller. */
const abortedWait: unique symbol = Symbol('aborted wait')

/**
 * Queues keys for reconciliation with client-go's workqueue semantics, in two priority lanes.
 *
 * @remarks
 * Semantics of client-go's rate-limiting delaying queue:
 *
 * - A key is queued at most once: adding a pending key again does nothing (the reconciler reads
 *   the latest state anyway, so n events for one object cost one reconcile).
 * - A key is never handed to two workers at once. Adding a key that a worker holds marks it
 *   pending, and {@link WorkQueue.done} queues it again, so a change that arrived during
 *   processing is never lost and never processed concurrently.
 * - {@link WorkQueue.addAfter} adds a key after a delay; {@link WorkQueue.addRateLimited} does so
 *   with the larger of a per-key exponential back-off and an overall token bucket, as
 *   `DefaultControllerRateLimiter`.
 * - After {@link WorkQueue.shutdown}, adds are ignored and pending delayed adds are dropped;
 *   `get` still hands out the keys already queued and then resolves `undefined`.
 *
 * Fair ordering: keys wait in a `high` lane (watch events; the default of `add`) or a `low` lane
 * (resyncs and retries; the default of the delayed adds), each first in, first out. `get` takes
 * from `high`, except that after {@link WorkQueueOptions.highBurst} (N, default 4) high keys in a
 * row it takes one `low` key if any waits, so the low lane still gets at least 1/(N+1) of the
 * throughput under sustained events. Adding a key queued in `low` with `high` priority moves it to
 * the tail of `high`; adding a `high` key with `low` priority leaves it where it is.
 *
 * Guarantee: a key added with `high` priority behind h other high keys is handed out after at
 * most `h + 1 + floor(h / N)` other keys, whatever the size of the low lane; with an empty high
 * lane it is the first or second key out, even behind a backlog of thousands of resync keys.
 * (A key held by a worker when it is added re-enters its lane when that worker is done.)
 *
 * @example
 * ```ts
 * const queue = new WorkQueue({ name: 'compositecontroller-web' })
 * queue.add('default/web')
 * queue.add('default/db', { priority: 'low' }) // a resync
 *
 * async function worker(): Promise<void> {
 *   for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
 *     try {
 *       await reconcile(key)
 *       queue.forget(key)
 *     } catch {
 *       queue.addRateLimited(key)
 *     } finally {
 *       queue.done(key)
 *     }
 *   }
 * }
 * ```
 */
export class WorkQueue<K extends string = string> {
  /** Identifies the queue in metrics and logs. */
  readonly name: string
  readonly #clock: Clock
  readonly #metrics: WorkQueueMetrics
  readonly #backoff: ExponentialBackoff<K>
  readonly #bucket: TokenBucket
  readonly #highBurst: number
  readonly #high = new QueueLane<K>()
  readonly #low = new QueueLane<K>()
  /** Keys that need processing: queued in a lane, or held by a worker and to be queued again. */
  readonly #pending = new Map<K, PendingKey>()
  /** Keys held by workers, with the time they were handed out. */
  readonly #processing = new Map<K, number>()
  readonly #delayed = new Map<K, DelayedKey>()
  #getters: Getter<K>[] = []
  readonly #drainWaiters = new Set<() => void>()
  /** High keys handed out since the last low one, capped at highBurst. */
  #highStreak = 0
  #shuttingDown = false

  /** Creates an empty queue. */
  constructor(options: WorkQueueOptions<K> = {}) {
    const highBurst = options.highBurst ?? 4
    if (!(highBurst === Infinity || (Number.isInteger(highBurst) && highBurst >= 1))) {
      throw new RangeError(`highBurst must be a positive integer or Infinity, got ${highBurst}`)
    }
    this.name = options.name ?? ''
    this.#clock = options.clock ?? systemClock
    this.#metrics = options.metrics ?? noopWorkQueueMetrics
    this.#backoff = options.backoff ?? new ExponentialBackoff<K>()
    this.#bucket = options.bucket ?? new TokenBucket({ qps: 10, burst: 100, clock: this.#clock })
    this.#highBurst = highBurst
  }

  /**
   * Marks `key` as needing processing (in the `high` lane unless told otherwise).
   *
   * @remarks
   * A key already pending is not queued twice, but is promoted when added with `high` priority.
   * A key held by a worker is queued again when the worker calls {@link WorkQueue.done}.
   */
  add(key: K, options: WorkQueueAddOptions = {}): void {
    if (this.#shuttingDown) return
    const priority = options.priority ?? 'high'
    const pending = this.#pending.get(key)
    if (pending !== undefined) {
      if (priority === 'high' && pending.priority === 'low') {
        pending.priority = 'high'
        if (this.#low.delete(key)) this.#high.push(key)
      }
      return
    }
    this.#pending.set(key, { priority, since: this.#clock.now() })
    this.#metrics.onAdd(key)
    if (this.#processing.has(key)) return
    this.#lane(priority).push(key)
    this.#metrics.depth(this.len())
    this.#dispatch()
  }

  /**
   * Adds `key` once `ms` milliseconds have passed (in the `low` lane unless told otherwise).
   *
   * @remarks
   * As client-go's delaying queue, a key waits for at most one delay: a later request with a
   * shorter delay replaces it, one with a longer delay is ignored (but may still raise the
   * priority the key is added with). A delay of 0 or less adds the key at once.
   */
  addAfter(key: K, ms: number, options: WorkQueueAddOptions = {}): void {
    if (this.#shuttingDown) return
    const priority = options.priority ?? 'low'
    if (!(ms > 0)) {
      this.add(key, { priority })
      return
    }
    const readyAt = this.#clock.now() + ms
    const waiting = this.#delayed.get(key)
    if (waiting !== undefined) {
      if (priority === 'high') waiting.priority = 'high'
      if (readyAt >= waiting.readyAt) return
      this.#clock.clearTimeout(waiting.timer)
    }
    const entry: DelayedKey = {
      readyAt,
      priority: waiting?.priority === 'high' ? 'high' : priority,
      timer: this.#clock.setTimeout(() => {
        this.#delayed.delete(key)
        this.add(key, { priority: entry.priority })
      }, ms),
    }
    this.#delayed.set(key, entry)
  }

  /**
   * Adds `key` after its rate-limited delay: the larger of its exponential back-off (which this
   * call advances) and the wait for a token of the queue's overall bucket.
   */
  addRateLimited(key: K, options: WorkQueueAddOptions = {}): void {
    if (this.#shuttingDown) return
    const delayMs = Math.max(this.#backoff.when(key), this.#bucket.reserve())
    this.#metrics.onRetry(key)
    this.addAfter(key, delayMs, options)
  }

  /** Resets the back-off of `key`, after it was processed successfully. */
  forget(key: K): void {
    this.#backoff.forget(key)
  }

  /** Returns how many rate-limited retries of `key` happened since it was last forgotten. */
  numRequeues(key: K): number {
    return this.#backoff.failures(key)
  }

  /**
   * Waits for the next key and hands it to the caller, who must call {@link WorkQueue.done} with
   * it; resolves `undefined` once the queue is shut down and no key is left.
   *
   * @remarks
   * Waiting callers are served first come, first served. When `signal` aborts the wait, the
   * promise rejects with the signal's reason and no key is taken; a key handed out before the
   * abort is still delivered.
   */
  async get(signal?: AbortSignal): Promise<K | undefined> {
    signal?.throwIfAborted()
    const ready = this.#takeNext()
    if (ready !== undefined || this.#shuttingDown) return ready
    const result = await new Promise<K | undefined | typeof abortedWait>((resolve) => {
      const onAbort = (): void => {
        this.#getters = this.#getters.filter((other) => other !== getter)
        resolve(abortedWait)
      }
      const getter: Getter<K> = {
        hand: (key) => {
          signal?.removeEventListener('abort', onAbort)
          resolve(key)
        },
      }
      this.#getters.push(getter)
      signal?.addEventListener('abort', onAbort, { once: true })
    })
    if (result !== abortedWait) return result
    // Only an aborted signal resolves the wait with abortedWait, so this always throws.
    signal?.throwIfAborted()
    return undefined
  }

  /**
   * Tells the queue a worker has finished `key`; queues it again if it was added meanwhile.
   * Finishing a key that is not held by a worker does nothing.
   */
  done(key: K): void {
    const startedAt = this.#processing.get(key)
    if (startedAt === undefined) return
    this.#processing.delete(key)
    const pending = this.#pending.get(key)
    if (pending !== undefined) this.#lane(pending.priority).push(key)
    this.#metrics.onDone(key, this.#clock.now() - startedAt)
    if (pending !== undefined) {
      this.#metrics.depth(this.len())
      this.#dispatch()
    }
    if (this.#processing.size === 0) {
      for (const drained of this.#drainWaiters) drained()
    }
  }

  /**
   * Stops accepting adds, drops pending delayed adds and resolves waiting gets with `undefined`.
   *
   * @remarks
   * Keys already queued stay; workers that keep calling `get` receive them before `undefined`.
   */
  shutdown(): void {
    if (this.#shuttingDown) return
    this.#shuttingDown = true
    for (const waiting of this.#delayed.values()) this.#clock.clearTimeout(waiting.timer)
    this.#delayed.clear()
    // A getter only waits while both lanes are empty, so none of them is owed a key.
    const getters = this.#getters
    this.#getters = []
    for (const getter of getters) getter.hand(undefined)
  }

  /**
   * Shuts the queue down and waits until every key held by a worker is done; resolves `true` then,
   * or `false` if `timeoutMs` passed first.
   *
   * @remarks
   * As client-go's `ShutDownWithDrain`, this waits for in-flight keys only, not for queued keys
   * that no worker has taken yet.
   */
  shutDownWithDrain(timeoutMs?: number): Promise<boolean> {
    this.shutdown()
    if (this.#processing.size === 0) return Promise.resolve(true)
    return new Promise<boolean>((resolve) => {
      let timer: TimerHandle | undefined
      const drained = (): void => {
        this.#drainWaiters.delete(drained)
        if (timer !== undefined) this.#clock.clearTimeout(timer)
        resolve(true)
      }
      this.#drainWaiters.add(drained)
      if (timeoutMs !== undefined) {
        timer = this.#clock.setTimeout(() => {
          this.#drainWaiters.delete(drained)
          resolve(false)
        }, timeoutMs)
      }
    })
  }

  /** Returns how many keys are queued for a worker, in one lane or (by default) in both. */
  len(priority?: WorkQueuePriority): number {
    if (priority === undefined) return this.#high.size + this.#low.size
    return this.#lane(priority).size
  }

  /**
   * Returns the key that has waited longest for a worker and for how long (ms), or undefined
   * when none waits. A key added again while a worker holds it counts from that add.
   */
  oldestWaiting(): { readonly key: K; readonly waitedMs: number } | undefined {
    // Pending keys are kept in the order they became pending, so the first one is the oldest.
    for (const [key, pending] of this.#pending) {
      return { key, waitedMs: Math.max(0, this.#clock.now() - pending.since) }
    }
    return undefined
  }

  /** Returns how many keys workers hold. */
  processingCount(): number {
    return this.#processing.size
  }

  /** Reports whether {@link WorkQueue.shutdown} has been called. */
  isShuttingDown(): boolean {
    return this.#shuttingDown
  }

  #lane(priority: WorkQueuePriority): QueueLane<K> {
    return priority === 'high' ? this.#high : this.#low
  }

  /** Takes the next key by the fairness rule and moves it from pending to processing. */
  #takeNext(): K | undefined {
    const takeLow =
      this.#low.size > 0 && (this.#high.size === 0 || this.#highStreak >= this.#highBurst)
    const key = takeLow ? this.#low.shift() : this.#high.shift()
    if (key === undefined) return undefined
    // Capped, so a burst of events while the low lane was empty does not owe it several keys.
    this.#highStreak = takeLow ? 0 : Math.min(this.#highStreak + 1, this.#highBurst)
    const now = this.#clock.now()
    const pending = this.#pending.get(key)
    this.#pending.delete(key)
    this.#processing.set(key, now)
    this.#metrics.onGet(key, pending === undefined ? 0 : now - pending.since)
    this.#metrics.depth(this.len())
    return key
  }

  /** Hands queued keys to waiting getters, oldest getter first. */
  #dispatch(): void {
    for (let getter = this.#getters[0]; getter !== undefined; getter = this.#getters[0]) {
      const key = this.#takeNext()
      if (key === undefined) return
      this.#getters.shift()
      getter.hand(key)
    }
  }
}
