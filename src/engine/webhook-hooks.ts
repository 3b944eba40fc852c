/**
 * Turns the webhook hooks of a CompositeController spec into hook functions: the only place
 * where the v1/v2 wire formats meet the engine.
 *
 * @module
 */
import { Agent } from 'undici'
import type {
  CompositeControllerSpec,
  HookSpec,
  WebhookSpec,
} from '../api/composite-controller-spec.js'
import type { CompositeSyncRequest, CompositeSyncResponse, HookName } from '../api/hook-model.js'
import { decodeCompositeSyncResponse } from '../api/wire/decode-response.js'
import { encodeCompositeSyncRequest } from '../api/wire/encode-request.js'
import { encodeRelativeObjectMap, encodeUniformObjectMap } from '../api/wire/object-map.js'
import type { Logger } from '../runtime/logger.js'
import type { CompositeHooks, HookFunction } from './composite-kind.js'
import { postWebhook } from './post-webhook.js'

function compositeWebhook(
  hook: HookSpec,
  webhook: WebhookSpec,
  name: HookName,
  log: Logger | undefined
): HookFunction<CompositeSyncRequest, CompositeSyncResponse> {
  // One pooled agent per hook, as upstream keeps one HTTP client per hook per controller.
  const agent = new Agent({ keepAliveTimeout: 30_000 })
  const encodeObjectMap = hook.version === 'v2' ? encodeUniformObjectMap : encodeRelativeObjectMap
  const mode = webhook.decodeMode ?? (hook.version === 'v2' ? 'strict' : 'loose')
  return async (request, signal) => {
    const body = encodeCompositeSyncRequest(request, encodeObjectMap)
    const text = await postWebhook(webhook.url, body, {
      timeoutMs: webhook.timeoutMs,
      signal,
      dispatcher: agent,
    })
    const decoded = decodeCompositeSyncResponse(text, { version: hook.version, hook: name, mode })
    if (decoded.warnings.length > 0)
      log?.debug('hook response warnings', {
        hook: name,
        url: webhook.url,
        warnings: decoded.warnings,
      })
    return decoded.response
  }
}

/** Builds the hook functions of a CompositeController's enabled webhooks. */
export function webhookCompositeHooks(spec: CompositeControllerSpec, log?: Logger): CompositeHooks {
  const build = (
    hook: HookSpec | undefined,
    name: HookName
  ): HookFunction<CompositeSyncRequest, CompositeSyncResponse> | undefined =>
    hook?.webhook === undefined ? undefined : compositeWebhook(hook, hook.webhook, name, log)
  const sync = build(spec.hooks.sync, 'sync')
  const finalize = build(spec.hooks.finalize, 'finalize')
  return {
    ...(sync === undefined ? {} : { sync }),
    ...(finalize === undefined ? {} : { finalize }),
  }
}
