/**
 * The hook-call step: one place where every sync and finalize hook of either controller kind is
 * called, whether it is a webhook or an in-process function.
 *
 * @module
 */
import type { HookFunction } from '../../api/hook-model.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import { redactSecrets } from '../hooks/redact-secrets.js'

/** Verbosity of whole hook requests and responses, as upstream's `--zap-log-level=6`. */
export const HOOK_BODY_VERBOSITY = 6

/**
 * Calls a hook and logs, at debug level, which one it was and how long it took; at
 * {@link HOOK_BODY_VERBOSITY}, the request and the response too, with Secret values redacted.
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
  const bodies = log.enabled(HOOK_BODY_VERBOSITY)
  if (bodies)
    log.v(HOOK_BODY_VERBOSITY, 'hook request', { hook: name, body: redactSecrets(request) })
  const response = await hook(request, signal)
  log.debug('hook called', { hook: name, durationMs: Date.now() - startedMs })
  if (bodies)
    log.v(HOOK_BODY_VERBOSITY, 'hook response', { hook: name, body: redactSecrets(response) })
  return response
}
