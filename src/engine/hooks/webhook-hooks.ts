/**
 * Turns the webhook hooks of a CompositeController or DecoratorController spec into hook
 * functions: the only place where the v1/v2 wire formats meet the engine.
 *
 * @module
 */
import type { Dispatcher } from 'undici'
import { Agent } from '../../kube/undici-core.js'
import { proxyDispatcher } from '../../kube/proxy/proxy-dispatcher.js'
import { processProxyResolver } from '../../kube/proxy/proxy-resolver.js'
import type { ProxyResolver } from '../../kube/proxy/proxy-resolver.js'
import type { CompositeControllerSpec } from '../../api/composite-controller-spec.js'
import type { ControllerHooks, HookSpec, WebhookSpec } from '../../api/controller-spec-fields.js'
import type { CompositeHooks, DecoratorHooks } from '../../api/controller-hooks.js'
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
import type { DecodedResponse } from '../../api/wire/response-reader.js'
import { hookCodec } from '../../api/wire/codecs.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import type { HookMetrics, HookRequestObserver } from '../metrics/hook-metrics.js'
import { EtagCache, etagCacheKey } from './etag-cache.js'
import { HookCallLimiter, limitHooks } from './hook-call-limiter.js'
import { postWebhook } from './post-webhook.js'
import { tracedConnector } from './traced-connector.js'
import type { HookAddressMap } from './traced-connector.js'
import type { CredentialReader, WebhookTransport } from './webhook-credentials.js'
import {
  WebhookCredentialError,
  resolveWebhookTransport,
  webhookSecurity,
} from './webhook-credentials.js'

/** How one hook's requests and responses go over the wire. */
export interface WireHook<Request, Response> {
  encode(request: Request): unknown
  decode(body: string, webhook: WebhookSpec): DecodedResponse<Response>
}

/** Receives the warnings of a loosely decoded response (unknown or duplicate fields). */
export type WarningSink = (warnings: readonly string[], hook: HookName, url: string) => void

/** Logs decode warnings at debug level, as upstream logs them at V(4). */
export function logWarnings(log: Logger | undefined): WarningSink {
  return (warnings, hook, url) => {
    log?.debug('hook response warnings', { hook, url, warnings })
  }
}

/** What else a webhook call needs besides its spec. */
export interface WebhookFunctionOptions {
  /** Resolved TLS and auth settings; none means system roots and no `authorization`. */
  readonly transport?: WebhookTransport
  /** Receives each request, for upstream's hook metrics. */
  readonly observer?: HookRequestObserver
  /** Largest response body accepted (default 64 MiB, `--hook-response-size-limit`). */
  readonly maxResponseBytes?: number
  /** Where connections for a hook URL's `host:port` go instead (`--hook-address`). */
  readonly addresses?: HookAddressMap
  /**
   * Decides each call's proxy; by default the process's `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY`,
   * as upstream's hook client (Go's default transport) reads them. Undefined: always direct.
   */
  readonly proxy?: ProxyResolver | undefined
}

function agentFor(
  transport: WebhookTransport | undefined,
  options: WebhookFunctionOptions,
  requestStarted: () => number
): Dispatcher {
  const tls = transport?.tls
  const observer = options.observer
  const connect = tracedConnector({
    // Upstream clones Go's transport with TLS 1.2 as the minimum when it sets a CA or certificate.
    ...(tls === undefined ? {} : { tls: { ...tls, minVersion: 'TLSv1.2' as const } }),
    // undici dials when a request finds no free connection, so the latest request opened it.
    ...(observer === undefined
      ? {}
      : {
          onPhase: (phase) => {
            observer.onConnectPhase(phase, (performance.now() - requestStarted()) / 1000)
          },
        }),
    ...(options.addresses === undefined ? {} : { addresses: options.addresses }),
  })
  const proxy = 'proxy' in options ? options.proxy : processProxyResolver()
  if (proxy === undefined) return new Agent({ keepAliveTimeout: 30_000, connect })
  return proxyDispatcher({ connect, resolve: proxy, agent: { keepAliveTimeout: 30_000 } })
}

/**
 * Builds the function that calls one webhook: encode, POST, decode; in ETag mode with
 * `If-None-Match` and the cached body on a 304 or 412.
 *
 * @param agents - Receives the hook's pooled agent, for the owner to close.
 */
export function webhookFunction<Request, Response>(
  webhook: WebhookSpec,
  name: HookName,
  wire: WireHook<Request, Response>,
  onWarnings: WarningSink,
  agents: { close(): Promise<void> }[],
  options: WebhookFunctionOptions = {}
): HookFunction<Request, Response> {
  let requestStarted = performance.now()
  // One pooled agent per hook, as upstream keeps one HTTP client per hook per controller.
  const agent = agentFor(options.transport, options, () => requestStarted)
  const cache = webhook.etag === undefined ? undefined : new EtagCache(webhook.etag)
  agents.push({
    close: async () => {
      cache?.close()
      await agent.close()
    },
  })
  return async (request, signal) => {
    const body = wire.encode(request)
    const key = cache === undefined ? undefined : etagCacheKey(body)
    const cached = key === undefined ? undefined : cache?.get(key)
    requestStarted = performance.now()
    const answer = await postWebhook(webhook.url, body, {
      timeoutMs: webhook.timeoutMs,
      signal,
      dispatcher: agent,
      headers: options.transport?.headers ?? {},
      ...(cached === undefined ? {} : { ifNoneMatch: cached.etag }),
      ...(options.observer === undefined ? {} : { observer: options.observer }),
      ...(options.maxResponseBytes === undefined
        ? {}
        : { maxResponseBytes: options.maxResponseBytes }),
    })
    let text = answer.body
    if (answer.notModified) {
      // postWebhook accepts 304/412 only when If-None-Match was sent, that is with an entry.
      text = cached?.body ?? ''
    } else if (key !== undefined && answer.etag !== undefined) {
      cache?.set(key, answer.etag, answer.body)
    }
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

/** What building a controller's webhooks needs besides its hooks. */
export interface BuildWebhooksOptions {
  readonly log?: Logger
  /** Reads the Secrets and ConfigMaps that TLS and auth settings name. */
  readonly credentials?: CredentialReader
  readonly metrics?: HookMetrics
  readonly controllerName: string
  /** `CompositeController` or `DecoratorController`, for the metrics. */
  readonly controllerType: string
  /** Largest response body accepted (default 64 MiB, `--hook-response-size-limit`). */
  readonly maxResponseBytes?: number
  /** Where connections for a hook URL's `host:port` go instead (`--hook-address`). */
  readonly addresses?: HookAddressMap
  /** Concurrent calls of this controller's hooks, all hooks together (`--hook-max-in-flight`). */
  readonly maxInFlight?: number
  /** Decides each call's proxy (see {@link WebhookFunctionOptions.proxy}). */
  readonly proxy?: ProxyResolver | undefined
}

/** A limiter for one controller's hooks, when a cap is set; its waiting calls are metered. */
export function hookLimiterFor(
  maxInFlight: number | undefined,
  metrics: HookMetrics | undefined,
  controllerName: string,
  controllerType: string
): HookCallLimiter | undefined {
  if (maxInFlight === undefined) return undefined
  return new HookCallLimiter(maxInFlight, metrics?.limiterObserver(controllerName, controllerType))
}

async function buildWebhooks<Request, Response>(
  hooks: ControllerHooks,
  wire: (hook: HookSpec, name: 'sync' | 'finalize') => WireHook<Request, Response>,
  options: BuildWebhooksOptions
): Promise<BuiltWebhooks<HookFunction<Request, Response>>> {
  const agents: { close(): Promise<void> }[] = []
  const build = async <Req, Res>(
    hook: HookSpec | undefined,
    name: 'sync' | 'finalize' | 'customize',
    hookWire: (hook: HookSpec) => WireHook<Req, Res>
  ): Promise<HookFunction<Req, Res> | undefined> => {
    const webhook = hook?.webhook
    if (hook === undefined || webhook === undefined) return undefined
    const transport = await resolveTransport(webhook, hooks, options.credentials)
    const observer = options.metrics?.hookObserver({
      hook: name,
      url: webhook.url,
      controllerName: options.controllerName,
      controllerType: options.controllerType,
    })
    return webhookFunction(webhook, name, hookWire(hook), logWarnings(options.log), agents, {
      transport,
      ...(observer === undefined ? {} : { observer }),
      ...(options.maxResponseBytes === undefined
        ? {}
        : { maxResponseBytes: options.maxResponseBytes }),
      ...(options.addresses === undefined ? {} : { addresses: options.addresses }),
      ...('proxy' in options ? { proxy: options.proxy } : {}),
    })
  }
  const close = async (): Promise<void> => {
    await Promise.all(agents.map((agent) => agent.close()))
  }
  try {
    const sync = await build(hooks.sync, 'sync', (hook) => wire(hook, 'sync'))
    const finalize = await build(hooks.finalize, 'finalize', (hook) => wire(hook, 'finalize'))
    const customize = await build(hooks.customize, 'customize', customizeWire)
    const built = {
      ...(sync === undefined ? {} : { sync }),
      ...(finalize === undefined ? {} : { finalize }),
      ...(customize === undefined ? {} : { customize }),
      close,
    }
    const limiter = hookLimiterFor(
      options.maxInFlight,
      options.metrics,
      options.controllerName,
      options.controllerType
    )
    return limiter === undefined ? built : limitHooks(built, limiter)
  } catch (error) {
    // A later hook's settings failed: release the agents of the earlier ones.
    await close()
    throw error
  }
}

async function resolveTransport(
  webhook: WebhookSpec,
  hooks: ControllerHooks,
  credentials: CredentialReader | undefined
): Promise<WebhookTransport> {
  if (credentials !== undefined) {
    return resolveWebhookTransport(webhook, hooks.endpointConfigs, credentials)
  }
  if (webhookSecurity(webhook, hooks.endpointConfigs) !== undefined) {
    throw new WebhookCredentialError(
      `webhook ${webhook.url}: TLS and auth settings need the engine's Secret and ConfigMap reader`
    )
  }
  return { headers: {} }
}

/** Builds the hook functions of a CompositeController's enabled webhooks. */
export function webhookCompositeHooks(
  spec: CompositeControllerSpec,
  options: BuildWebhooksOptions
): Promise<CompositeHooks> {
  return buildWebhooks(spec.hooks, compositeWire, options)
}

/** Builds the hook functions of a DecoratorController's enabled webhooks. */
export function webhookDecoratorHooks(
  spec: DecoratorControllerSpec,
  options: BuildWebhooksOptions
): Promise<DecoratorHooks> {
  return buildWebhooks(spec.hooks, decoratorWire, options)
}
