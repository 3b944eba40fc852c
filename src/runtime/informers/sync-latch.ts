/**
 * An informer's first sync as a latch: closed until the first list is in the cache, then open
 * for good, with waiters that can give up on an abort signal.
 *
 * @module
 */

/** Opens once, and lets every waiter through from then on. */
export class SyncLatch {
  #open = false
  readonly #waiters = new Set<() => void>()

  /** Whether {@link SyncLatch.open} was called. */
  get isOpen(): boolean {
    return this.#open
  }

  /** Opens the latch and lets every waiter through; later calls do nothing. */
  open(): void {
    if (this.#open) return
    this.#open = true
    for (const waiter of this.#waiters) waiter()
    this.#waiters.clear()
  }

  /** Resolves once the latch is open; rejects with the signal's reason when it aborts first. */
  wait(signal?: AbortSignal): Promise<void> {
    if (this.#open) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const done = (): void => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }
      const onAbort = (): void => {
        this.#waiters.delete(done)
        reject(signal?.reason as Error)
      }
      if (signal?.aborted === true) {
        onAbort()
        return
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#waiters.add(done)
    })
  }
}
