/**
 * The typed reconcile errors the controller loop maps to queue operations.
 *
 * @module
 */

/** Asks for a retry after a fixed delay without growing the backoff (a hook's 429). */
export class RetryAfterError extends Error {
  override readonly name = 'RetryAfterError'
  /** Delay before the retry. */
  readonly afterMs: number
  constructor(message: string, afterMs: number, options?: ErrorOptions) {
    super(message, options)
    this.afterMs = afterMs
  }
}

/** Says a cache this reconcile needs is not synced yet: retry with backoff, no event. */
export class NotSyncedError extends Error {
  override readonly name = 'NotSyncedError'
}

/**
 * Says retrying cannot help until the input changes (an invalid spec): logged, reported and
 * forgotten until the next watch event.
 */
export class TerminalError extends Error {
  override readonly name: string = 'TerminalError'
}
