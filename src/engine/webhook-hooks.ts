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
import { hookCodec } from '../api/wire/codecs.js'
import type { Logger } from '../runtime/logger.js'
import type { CompositeHooks, HookFunction } from './composite-kind.js'
import { postWebhook } from './post-webhook.js'

function compositeWebhook(
  hook: HookSpec,
  webhook: WebhookSpec,
  name: HookName,
  log: Logger | undefined,
  agents: Agent[]
): HookFunction<CompositeSyncRequest, CompositeSyncResponse> {
  // One pooled agent per hook, as upstream keeps one HTTP client per hook per controller.
  const agent = new Agent({ keepAliveTimeout: 30_000 })
  agents.push(agent)
  const codec = hookCodec(hook.version)
  return async (request, signal) => {
    const body = codec.encodeCompositeSync(request)
    const text = await postWebhook(webhook.url, body, {
      timeoutMs: webhook.timeoutMs,
      signal,
      dispatcher: agent,
    })
    const decoded = codec.decodeCompositeSync(text, {
      hook: name === 'finalize' ? 'finalize' : 'sync',
      mode: webhook.decodeMode,
    })
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
  const agents: Agent[] = []
  const build = (
    hook: HookSpec | undefined,
    name: HookName
  ): HookFunction<CompositeSyncRequest, CompositeSyncResponse> | undefined =>
    hook?.webhook === undefined
      ? undefined
      : compositeWebhook(hook, hook.webhook, name, log, agents)
  const sync = build(spec.hooks.sync, 'sync')
  const finalize = build(spec.hooks.finalize, 'finalize')
  return {
    ...(sync === undefined ? {} : { sync }),
    ...(finalize === undefined ? {} : { finalize }),
    close: async () => {
      await Promise.all(agents.map((agent) => agent.close()))
    },
  }
}
