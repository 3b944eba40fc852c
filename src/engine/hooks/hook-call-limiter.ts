/**
 * A per-controller cap on concurrent hook calls (`metactl run --hook-max-in-flight`).
 *
 * @remarks
 * Workers call at most one hook each, but the customize hook is also called from informer events
 * (a related object changed, thousands of parents woke up): without a cap a burst opens as many
 * concurrent requests to one hook server as there are parents. Calls beyond the cap wait, first
 * come first served, and a waiting call whose sync is cancelled (shutdown, timeout) leaves the
 * queue without ever being sent.
 *
 * @module
 */
import type { HookFunction } from '../../api/hook-model.js'
import type { HookCallWaitObserver, MeteredHook } from '../metrics/hook-metrics.js'

/**
 * Default of `--hook-max-in-flight`: over three times the default 5 workers (each calls one hook
 * at a time), so that at default settings the cap never holds back a worker and only bounds
 * bursts of customize calls from events; a hook server sees at most this many requests per
 * controller.
 */
export const DEFAULT_HOOK_MAX_IN_FLIGHT = 16

/** The hook kinds a limiter sees, for its observer (the metered ones). */
export type LimitedHook = MeteredHook

/** Receives how many calls wait for a slot, per hook, whenever it changes. */
export type HookCallLimiterObserver = HookCallWaitObserver

interface Waiter {
  readonly grant: () => void
}

/** A counting semaphore for one controller's hook calls. */
export class HookCallLimiter {
  readonly #max: number
  readonly #observer: HookCallLimiterObserver | undefined
  // A Set keeps insertion order (FIFO) and lets an aborted waiter leave in O(1).
  readonly #waiters = new Set<Waiter>()
  #inFlight = 0

  /**
   * @param maxInFlight - Calls allowed at once; a positive integer.
   * @throws RangeError for anything else.
   */
  constructor(maxInFlight: number, observer?: HookCallLimiterObserver) {
    if (!Number.isInteger(maxInFlight) || maxInFlight < 1)
      throw new RangeError(`maxInFlight must be a positive integer, got ${maxInFlight}`)
    this.#max = maxInFlight
    this.#observer = observer
  }

  /** Calls running now. */
  get inFlight(): number {
    return this.#inFlight
  }

  /** Calls waiting for a slot now. */
  get waiting(): number {
    return this.#waiters.size
  }

  /**
   * Runs `call` once a slot is free and frees the slot when it settles.
   *
   * @throws the signal's reason when `signal` aborts before a slot was free (`call` never runs).
   */
  async run<T>(hook: LimitedHook, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
    await this.#acquire(hook, signal)
    try {
      return await call()
    } finally {
      this.#release()
    }
  }

  #acquire(hook: LimitedHook, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted()
    if (this.#inFlight < this.#max) {
      this.#inFlight++
      return Promise.resolve()
    }
    return new Promise<void>((resolve, reject) => {
      const leave = (): void => {
        this.#waiters.delete(waiter)
        signal.removeEventListener('abort', onAbort)
        this.#observer?.onWaiting(hook, -1)
      }
      const onAbort = (): void => {
        leave()
        reject(signal.reason as Error)
      }
      // The slot passes straight from the releasing call to this one: inFlight stays counted.
      const waiter: Waiter = {
        grant: () => {
          leave()
          resolve()
        },
      }
      this.#waiters.add(waiter)
      this.#observer?.onWaiting(hook, 1)
      signal.addEventListener('abort', onAbort, { once: true })
    })
  }

  #release(): void {
    const next = this.#waiters.values().next()
    if (next.done === true) {
      this.#inFlight--
      return
    }
    next.value.grant()
  }
}

/** Any hook function: every `HookFunction<Request, Response>` is one. */
type AnyHook = HookFunction<never, unknown>

/** Wraps one hook function so that its calls go through `limiter`. */
export function limitHook<Hook extends AnyHook>(
  hook: LimitedHook,
  call: Hook,
  limiter: HookCallLimiter
): Hook {
  const limited: AnyHook = (request, signal) =>
    limiter.run(hook, signal, () => call(request, signal))
  // Same parameters, same result: only the timing of the call changes.
  return limited as Hook
}

/** A controller's hook functions, of either kind (and `close`, kept as it is). */
interface HookSet {
  readonly sync?: AnyHook
  readonly finalize?: AnyHook
  readonly customize?: AnyHook
}

/**
 * Returns `hooks` with sync, finalize and customize sharing one limiter: the cap is per
 * controller, whichever hook a burst calls.
 */
export function limitHooks<Hooks extends HookSet>(hooks: Hooks, limiter: HookCallLimiter): Hooks {
  const { sync, finalize, customize } = hooks
  return {
    ...hooks,
    ...(sync === undefined ? {} : { sync: limitHook('sync', sync, limiter) }),
    ...(finalize === undefined ? {} : { finalize: limitHook('finalize', finalize, limiter) }),
    ...(customize === undefined ? {} : { customize: limitHook('customize', customize, limiter) }),
  }
}
