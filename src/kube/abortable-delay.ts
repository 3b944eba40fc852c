/**
 * A delay that rejects with the signal's reason when its signal aborts, for waits whose caller
 * must stop at once (a retry after 429, an on-demand discovery refresh). The timer is referenced
 * on purpose: a caller is awaiting it, so the process must not exit meanwhile.
 *
 * @module
 */

/** Resolves after `ms`, or rejects with `signal`'s reason as soon as it aborts (at once if it has). */
export function abortableDelay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error)
      return
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(signal?.reason as Error)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
