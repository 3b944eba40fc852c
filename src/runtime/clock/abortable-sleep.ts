/**
 * A sleep that ends early, without rejecting, when its signal aborts: the lease loops (leader
 * election, ring membership) check the signal themselves after every wait.
 *
 * @module
 */
import type { Clock } from './clock.js'
import { systemClock } from './clock.js'

/**
 * Resolves after `ms` on `clock` (Node's timers by default), or as soon as `signal` aborts (at
 * once if it already has).
 */
export function abortableSleep(
  ms: number,
  signal: AbortSignal,
  clock: Clock = systemClock
): Promise<void> {
  if (signal.aborted) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = clock.setTimeout(done, ms)
    function done(): void {
      clock.clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}
