/**
 * The hook-call step: one place where every sync and finalize hook of either controller kind is
 * called, whether it is a webhook or an in-process function.
 *
 * @module
 */
import type { HookFunction } from '../../api/hook-model.js'
import type { Logger } from '../../runtime/logger.js'

/**
 * Calls a hook and logs, at debug level, which one it was and how long it took.
 *
 * @param name - The hook's role (`sync`, `finalize`), for the log line.
 */
export async function callHook<Request, Response>(
  hook: HookFunction<Request, Response>,
  name: string,
  request: Request,
  signal: AbortSignal,
  log: Logger
): Promise<Response> {
  const startedMs = Date.now()
  const response = await hook(request, signal)
  log.debug('hook called', { hook: name, durationMs: Date.now() - startedMs })
  return response
}
