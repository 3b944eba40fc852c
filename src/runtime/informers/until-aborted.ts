/**
 * Helpers that keep an informer's loop prompt when its {@link ListWatcher} ignores the abort
 * signal: race each wait against the signal, and abandon a stream without waiting for it.
 *
 * @module
 */

/** Settles as `promise` does, or rejects with the signal's reason as soon as `signal` aborts. */
export function untilAborted<V>(promise: Promise<V>, signal: AbortSignal): Promise<V> {
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
export function closeIterator(iterator: AsyncIterator<unknown>): void {
  try {
    void Promise.resolve(iterator.return?.()).catch(() => undefined)
  } catch {
    // A stream whose return() throws is abandoned all the same.
  }
}
