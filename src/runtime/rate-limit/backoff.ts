/** Options of {@link ExponentialBackoff}. */
export interface ExponentialBackoffOptions {
  /** Delay after the first failure (5 ms). */
  readonly baseMs?: number
  /** Longest delay, however many failures (1000 s). */
  readonly maxMs?: number
}

/**
 * Counts failures per key and turns them into exponentially growing retry delays.
 *
 * @remarks
 * Mirrors client-go's `ItemExponentialFailureRateLimiter` with the defaults of
 * `DefaultControllerRateLimiter`: the n-th consecutive failure of a key waits
 * `baseMs * 2^(n-1)`, i.e. 5 ms, 10 ms, 20 ms, … up to 1000 s (reached at the 19th failure),
 * until {@link ExponentialBackoff.forget} resets the key after a success. Keys are independent,
 * so one object failing forever does not slow down the others.
 */
export class ExponentialBackoff<K = string> {
  readonly #baseMs: number
  readonly #maxMs: number
  readonly #failures = new Map<K, number>()

  /** Creates a back-off with no failures recorded. */
  constructor(options: ExponentialBackoffOptions = {}) {
    const baseMs = options.baseMs ?? 5
    const maxMs = options.maxMs ?? 1_000_000
    // A zero base would make 0 * 2^1024 = NaN once the exponent overflows, so it is refused.
    if (!(baseMs > 0 && baseMs < Infinity)) {
      throw new RangeError(`baseMs must be positive and finite, got ${baseMs}`)
    }
    if (!(maxMs >= baseMs)) throw new RangeError(`maxMs must be >= baseMs, got ${maxMs}`)
    this.#baseMs = baseMs
    this.#maxMs = maxMs
  }

  /** Records one more failure of `key` and returns how long to wait before retrying it. */
  when(key: K): number {
    const failures = this.#failures.get(key) ?? 0
    this.#failures.set(key, failures + 1)
    // 2 ** failures becomes Infinity rather than wrapping, so the cap also holds after overflow.
    return Math.min(this.#baseMs * 2 ** failures, this.#maxMs)
  }

  /** Forgets the failures of `key`, so its next failure waits the base delay again. */
  forget(key: K): void {
    this.#failures.delete(key)
  }

  /** Returns how many failures of `key` have been recorded since it was last forgotten. */
  failures(key: K): number {
    return this.#failures.get(key) ?? 0
  }
}

/** Options of {@link jitteredBackoffMs}; the defaults are those of watch retries. */
export interface JitteredBackoffOptions {
  /** Delay of the first attempt, before jitter (800 ms, client-go's reflector back-off). */
  readonly baseMs?: number
  /** Longest delay before jitter, and a hard upper bound on the result (30 s). */
  readonly maxMs?: number
  /** Largest fraction by which the delay is shortened at random, in [0, 1] (0.2). */
  readonly jitter?: number
  /** Source of uniform numbers in [0, 1) (`Math.random`); inject a constant for determinism. */
  readonly random?: () => number
}

/**
 * Returns the delay before retry `attempt` (0 for the first retry): `baseMs * 2^attempt`, capped
 * at `maxMs`, then shortened by a random fraction of up to `jitter`.
 *
 * @remarks
 * Jitter only ever shortens the delay, so `maxMs` stays a hard bound that operators can rely on,
 * and the spread stays the full `jitter` fraction even at the cap, where many watches that lost
 * the same API server would otherwise reconnect in lock-step. With the defaults the delays are
 * about 640–800 ms, 1.3–1.6 s, 2.6–3.2 s, … and 24–30 s from attempt 6 on.
 */
export function jitteredBackoffMs(attempt: number, options: JitteredBackoffOptions = {}): number {
  const baseMs = options.baseMs ?? 800
  const maxMs = options.maxMs ?? 30_000
  const jitter = options.jitter ?? 0.2
  const random = options.random ?? Math.random
  if (!(Number.isInteger(attempt) && attempt >= 0)) {
    throw new RangeError(`attempt must be a non-negative integer, got ${attempt}`)
  }
  if (!(baseMs >= 0 && maxMs >= baseMs)) {
    throw new RangeError(`need 0 <= baseMs <= maxMs, got ${baseMs} and ${maxMs}`)
  }
  if (!(jitter >= 0 && jitter <= 1)) throw new RangeError(`jitter must be in [0, 1], got ${jitter}`)
  // A zero base stays zero instead of becoming 0 * Infinity = NaN for huge attempts.
  const capped = baseMs === 0 ? 0 : Math.min(baseMs * 2 ** attempt, maxMs)
  const fraction = Math.min(Math.max(random(), 0), 1)
  return capped * (1 - jitter * fraction)
}
