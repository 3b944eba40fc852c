import { systemClock, type Clock } from '../clock/clock.js'

/** Options of {@link TokenBucket}. */
export interface TokenBucketOptions {
  /** Tokens added per second; `Infinity` disables limiting. */
  readonly qps: number
  /** Most tokens the bucket holds, i.e. how many takes may happen at once after a quiet spell. */
  readonly burst: number
  /** Time source ({@link systemClock}). */
  readonly clock?: Clock
}

/**
 * Limits a rate of events to `qps` per second on average, with bursts of up to `burst`.
 *
 * @remarks
 * Behaves as `golang.org/x/time/rate.Limiter` with `Reserve()`, which client-go's
 * `BucketRateLimiter` (10 qps, burst 100, the work queue's overall retry limit) and its
 * client-side API throttling both use: the bucket starts full, refills continuously, and a
 * reservation always succeeds but may leave the bucket in debt; the caller then waits out the
 * debt. Reserving therefore orders callers fairly, first come first served, without a queue.
 */
export class TokenBucket {
  readonly #burst: number
  readonly #clock: Clock
  /** Milliseconds per token; 0 for an infinite rate. */
  readonly #intervalMs: number
  /**
   * When the bucket will be full again if nobody takes a token meanwhile.
   *
   * Keeping this instant instead of a fractional token count (the GCRA formulation) makes the
   * arithmetic exact for whole-millisecond clocks and intervals, so a bucket refilled in many
   * small steps grants exactly as many tokens as one refilled in a single step.
   */
  #fullAt: number
  /** Latest clock reading, so a clock that steps back cannot drain the bucket. */
  #latest: number

  /** Creates a full bucket. */
  constructor(options: TokenBucketOptions) {
    if (!(options.qps > 0)) throw new RangeError(`qps must be positive, got ${options.qps}`)
    if (!(Number.isInteger(options.burst) && options.burst >= 1)) {
      throw new RangeError(`burst must be a positive integer, got ${options.burst}`)
    }
    this.#burst = options.burst
    this.#clock = options.clock ?? systemClock
    this.#intervalMs = 1000 / options.qps
    this.#latest = this.#clock.now()
    this.#fullAt = this.#latest
  }

  /**
   * Takes a token and returns how many milliseconds the caller must wait before using it: 0 when
   * one was available, otherwise the time until the bucket's debt is repaid.
   */
  reserve(): number {
    if (this.#intervalMs === 0) return 0
    const now = this.#now()
    this.#fullAt = Math.max(this.#fullAt, now) + this.#intervalMs
    const waitMs = this.#fullAt - now - this.#burst * this.#intervalMs
    // Rounded up to whole milliseconds, less a hair, so float noise does not turn an exact 100 ms
    // into 101 ms; acting a fraction of a millisecond late never exceeds the rate.
    return waitMs > 0 ? Math.ceil(waitMs - 1e-9) : 0
  }

  /** Takes a token if one is available now and reports whether it did; never goes into debt. */
  tryTake(): boolean {
    if (this.#intervalMs === 0) return true
    const now = this.#now()
    const fullAt = Math.max(this.#fullAt, now) + this.#intervalMs
    if (fullAt - now > this.#burst * this.#intervalMs) return false
    this.#fullAt = fullAt
    return true
  }

  /**
   * Takes a token, waiting on the clock until it may be used.
   *
   * @remarks
   * When `signal` aborts the wait, the promise rejects with the signal's reason and the token is
   * given back, so abandoned callers do not eat into the rate of the others.
   */
  async take(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted()
    const waitMs = this.reserve()
    if (waitMs === 0) return
    const fired = await new Promise<boolean>((resolve) => {
      const onAbort = (): void => {
        this.#clock.clearTimeout(timer)
        this.#fullAt -= this.#intervalMs
        resolve(false)
      }
      const timer = this.#clock.setTimeout(() => {
        signal?.removeEventListener('abort', onAbort)
        resolve(true)
      }, waitMs)
      signal?.addEventListener('abort', onAbort, { once: true })
    })
    // Rethrown here rather than rejected above, so the caller gets the signal's reason verbatim.
    if (!fired) signal?.throwIfAborted()
  }

  /** Returns the tokens available now; negative while reservations are waiting out a debt. */
  available(): number {
    if (this.#intervalMs === 0) return this.#burst
    return this.#burst - Math.max(0, this.#fullAt - this.#now()) / this.#intervalMs
  }

  #now(): number {
    this.#latest = Math.max(this.#latest, this.#clock.now())
    return this.#latest
  }
}
