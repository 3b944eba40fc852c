/**
 * A sleep that ends early, without rejecting, when its signal aborts: the lease loops (leader
 * election, ring membership) check the signal themselves after every wait.
 *
 * @module
 */

/** Resolves after `ms`, or as soon as `signal` aborts (at once if it already has). */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    function done(): void {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}
