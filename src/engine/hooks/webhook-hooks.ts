/**
 * Turns the webhook hooks of a CompositeController or DecoratorController spec into hook
 * functions: the only place where the v1/v2 wire formats meet the engine.
 *
 * @module
 */
import { Agent } from 'undici'
import type { CompositeControllerSpec } from '../../api/composite-controller-spec.js'
import type { ControllerHooks, HookSpec, WebhookSpec } from '../../api/controller-spec-fields.js'
import type { DecoratorControllerSpec } from '../../api/decorator-controller-spec.js'
import type {
  CompositeSyncRequest,
  CompositeSyncResponse,
  CustomizeRequest,
  CustomizeResponse,
  DecoratorSyncRequest,
  DecoratorSyncResponse,
  HookFunction,
  HookName,
} from '../../api/hook-model.js'
import type { DecodedResponse } from '../../api/wire/decode-response.js'
import { hookCodec } from '../../api/wire/codecs.js'
import type { Logger } from '../../runtime/logger.js'
import type { CompositeHooks } from '../composite/composite-kind.js'
import type { DecoratorHooks } from '../decorator/decorator-kind.js'
import { postWebhook } from './post-webhook.js'

/** How one hook's requests and responses go over the wire. */
export interface WireHook<Request, Response> {
  encode(request: Request): unknown
  decode(body: string, webhook: WebhookSpec): DecodedResponse<Response>
}

/** Limits applied to every webhook call. */
export interface WebhookLimits {
  /** Largest response body accepted (64 MiB). */
  readonly maxResponseBytes?: number
}

/** Receives the warnings of a loosely decoded response (unknown or duplicate fields). */
export type WarningSink = (warnings: readonly string[], hook: HookName, url: string) => void

/** Logs decode warnings at debug level, as upstream logs them at V(4). */
export function logWarnings(log: Logger | undefined): WarningSink {
  return (warnings, hook, url) => {
    log?.debug('hook response warnings', { hook, url, warnings })
  }
}

/**
 * Builds the function that calls one webhook: encode, POST, decode.
 *
 * @param agents - Receives the hook's pooled agent, for the owner to close.
 */
export function webhookFunction<Request, Response>(
  webhook: WebhookSpec,
  name: HookName,
  wire: WireHook<Request, Response>,
  onWarnings: WarningSink,
  agents: Agent[],
  limits: WebhookLimits = {}
): HookFunction<Request, Response> {
  // One pooled agent per hook, as upstream keeps one HTTP client per hook per controller.
  const agent = new Agent({ keepAliveTimeout: 30_000 })
  agents.push(agent)
  return async (request, signal) => {
    const text = await postWebhook(webhook.url, wire.encode(request), {
      timeoutMs: webhook.timeoutMs,
      signal,
      dispatcher: agent,
      ...(limits.maxResponseBytes === undefined
        ? {}
        : { maxResponseBytes: limits.maxResponseBytes }),
    })
    const decoded = wire.decode(text, webhook)
    if (decoded.warnings.length > 0) onWarnings(decoded.warnings, name, webhook.url)
    return decoded.response
  }
}

/** The wire of a CompositeController sync or finalize hook of the given protocol version. */
export function compositeWire(
  hook: HookSpec,
  name: 'sync' | 'finalize'
): WireHook<CompositeSyncRequest, CompositeSyncResponse> {
  const codec = hookCodec(hook.version)
  return {
    encode: (request) => codec.encodeCompositeSync(request),
    decode: (body, webhook) =>
      codec.decodeCompositeSync(body, { hook: name, mode: webhook.decodeMode }),
  }
}

/** The wire of a DecoratorController sync or finalize hook of the given protocol version. */
export function decoratorWire(
  hook: HookSpec,
  name: 'sync' | 'finalize'
): WireHook<DecoratorSyncRequest, DecoratorSyncResponse> {
  const codec = hookCodec(hook.version)
  return {
    encode: (request) => codec.encodeDecoratorSync(request),
    decode: (body, webhook) =>
      codec.decodeDecoratorSync(body, { hook: name, mode: webhook.decodeMode }),
  }
}

/** The wire of a customize hook of the given protocol version. */
export function customizeWire(hook: HookSpec): WireHook<CustomizeRequest, CustomizeResponse> {
  const codec = hookCodec(hook.version)
  return {
    encode: (request) => codec.encodeCustomize(request),
    decode: (body, webhook) => codec.decodeCustomize(body, { mode: webhook.decodeMode }),
  }
}

/** The webhook functions of a controller's enabled hooks, and how to release them. */
interface BuiltWebhooks<Sync> {
  readonly sync?: Sync
  readonly finalize?: Sync
  readonly customize?: HookFunction<CustomizeRequest, CustomizeResponse>
  readonly close: () => Promise<void>
}

function buildWebhooks<Request, Response>(
  hooks: ControllerHooks,
  wire: (hook: HookSpec, name: 'sync' | 'finalize') => WireHook<Request, Response>,
  log: Logger | undefined,
  limits: WebhookLimits
): BuiltWebhooks<HookFunction<Request, Response>> {
  const agents: Agent[] = []
  const build = <Req, Res>(
    hook: HookSpec | undefined,
    name: HookName,
    hookWire: (hook: HookSpec) => WireHook<Req, Res>
  ): HookFunction<Req, Res> | undefined =>
    hook?.webhook === undefined
      ? undefined
      : webhookFunction(hook.webhook, name, hookWire(hook), logWarnings(log), agents, limits)
  const sync = build(hooks.sync, 'sync', (hook) => wire(hook, 'sync'))
  const finalize = build(hooks.finalize, 'finalize', (hook) => wire(hook, 'finalize'))
  const customize = build(hooks.customize, 'customize', customizeWire)
  return {
    ...(sync === undefined ? {} : { sync }),
    ...(finalize === undefined ? {} : { finalize }),
    ...(customize === undefined ? {} : { customize }),
    close: async () => {
      await Promise.all(agents.map((agent) => agent.close()))
    },
  }
}

/** Builds the hook functions of a CompositeController's enabled webhooks. */
export function webhookCompositeHooks(
  spec: CompositeControllerSpec,
  log?: Logger,
  limits: WebhookLimits = {}
): CompositeHooks {
  return buildWebhooks(spec.hooks, compositeWire, log, limits)
}

/** Builds the hook functions of a DecoratorController's enabled webhooks. */
export function webhookDecoratorHooks(
  spec: DecoratorControllerSpec,
  log?: Logger,
  limits: WebhookLimits = {}
): DecoratorHooks {
  return buildWebhooks(spec.hooks, decoratorWire, log, limits)
}
