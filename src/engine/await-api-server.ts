/**
 * The engine's first contact with the API server: upstream's retries before giving up.
 *
 * @module
 */
import { messageOf } from '../core/message-of.js'
import type { KubeTransport } from '../kube/kube-transport.js'
import type { Logger } from '../runtime/diagnostics/logger.js'

/** Raised by `Engine.start` when the engine cannot start (an unreachable API server). */
export class EngineStartError extends Error {
  override readonly name = 'EngineStartError'
}

/** Attempts, as upstream, before the engine gives up on an unreachable API server. */
const START_ATTEMPTS = 6
/** The wait between two attempts, as upstream. */
const START_RETRY_MS = 5000

/** Resolves after `ms`, or at once when `signal` aborts. */
function abortableDelay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}

/**
 * Resolves once the API server answers `GET /api`.
 *
 * @remarks
 * Upstream makes up to 6 attempts 5 s apart to reach the API server before giving up, so a
 * start-up failure is reported within about 55 s. `signal` (shutdown) ends the wait at once.
 *
 * @throws EngineStartError when the API server cannot be reached.
 */
export async function awaitApiServer(
  transport: KubeTransport,
  log: Logger,
  signal: AbortSignal | undefined
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    signal?.throwIfAborted()
    try {
      await transport.requestJson({
        method: 'GET',
        path: '/api',
        timeoutMs: 5000,
        ...(signal === undefined ? {} : { signal }),
      })
      return
    } catch (error) {
      signal?.throwIfAborted()
      if (attempt >= START_ATTEMPTS)
        throw new EngineStartError(
          `cannot reach the API server at ${transport.config.server} after ${attempt} ` +
            `attempts: ${messageOf(error)}`,
          { cause: error }
        )
      log.warn('API server not reachable yet', { attempt, error })
      await abortableDelay(START_RETRY_MS, signal)
    }
  }
}
