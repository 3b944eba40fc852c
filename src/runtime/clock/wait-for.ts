/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** Gives up after this long (10 s). */
  readonly timeoutMs?: number
  /** Polls this often (100 ms). */
  readonly intervalMs?: number
  /** What is awaited, for the timeout message. */
  readonly description?: string
  readonly signal?: AbortSignal
}

/** Raised when {@link waitFor} runs out of time; carries the last error the condition threw. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError'
}

/**
 * Polls a condition until it returns a value other than `undefined` or `false`, and returns it.
 *
 * @remarks
 * A condition that throws counts as "not yet"; the last error becomes the timeout's cause, so a
 * failing test shows why the condition never held, not only that it did not.
 *
 * @example
 * ```ts
 * const pod = await waitFor(() => client.get(pods, 'web', { namespace }).catch(() => undefined))
 * ```
 */
export async function waitFor<T>(
  condition: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitForOptions = {}
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000
  const intervalMs = options.intervalMs ?? 100
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    options.signal?.throwIfAborted()
    try {
      const value = await condition()
      if (value !== undefined && value !== false) return value
    } catch (error) {
      lastError = error
    }
    if (Date.now() >= deadline) {
      const what = options.description ?? 'condition'
      const why = lastError instanceof Error ? `; last error: ${lastError.message}` : ''
      throw new WaitTimeoutError(`timed out after ${timeoutMs} ms waiting for ${what}${why}`, {
        cause: lastError,
      })
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}
