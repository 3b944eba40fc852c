/**
 * The services one engine shares between its hosted controllers, built from its options: the
 * API clients with their rate-limit budgets and write guard, discovery, the shared informers, the
 * event recorder and the way children are written.
 *
 * @module
 */
import { compileLabelSelector } from '../core/label-selector.js'
import { parseSelectorString } from '../core/parse-selector-string.js'
import type { ClusterConfig } from '../kube/cluster-config.js'
import { Discovery } from '../kube/discovery.js'
import { DynamicClient } from '../kube/dynamic-client.js'
import { KubeTransport } from '../kube/kube-transport.js'
import type { RequestLimiter, RequestObserver } from '../kube/kube-transport.js'
import type { Logger } from '../runtime/diagnostics/logger.js'
import { silentLogger } from '../runtime/diagnostics/logger.js'
import { dynamicListWatcher } from '../runtime/informers/list-watcher.js'
import { SharedInformers } from '../runtime/informers/shared-informers.js'
import type { ListWatcherFactory } from '../runtime/informers/shared-informers.js'
import { NotLeaderError } from '../runtime/leader/not-leader-error.js'
import { RuntimeMetrics } from '../runtime/metrics/runtime-metrics.js'
import {
  DEFAULT_CLIENT_RATE_LIMIT,
  tokenBucketLimiter,
} from '../runtime/rate-limit/token-bucket-limiter.js'
import type { ApplyStrategy, ChildApplier } from './children/child-applier.js'
import { ENGINE_FIELD_MANAGER } from './children/child-applier.js'
import { dynamicApplier } from './children/dynamic-applier.js'
import type { EngineContext } from './engine-context.js'
import { DEFAULT_REVISION_NAMESPACE } from './engine-options.js'
import type { EngineOptions } from './engine-options.js'
import { EventRecorder } from './events/event-recorder.js'
import { DEFAULT_HOOK_MAX_IN_FLIGHT } from './hooks/hook-call-limiter.js'
import { DEFAULT_MAX_RESPONSE_BYTES } from './hooks/post-webhook.js'
import type { EngineLeadership } from './leadership/engine-leadership.js'
import { hookMetricsFor } from './metrics/hook-metrics.js'
import { objectCompactor } from './object-compactor.js'
import { loggingRequestObserver } from './request-log.js'
import { ForbiddenRequests } from './forbidden/forbidden-requests.js'
import { observeForbidden } from './forbidden/cache-readiness.js'
import { isForbidden } from './forbidden/is-forbidden.js'

/** What {@link buildEngineServices} builds. */
export interface EngineServices {
  /** The transport of the objects' client. */
  readonly transport: KubeTransport
  readonly metrics: RuntimeMetrics
  /** The event recorder's own client: its own token bucket, as upstream's event broadcaster. */
  readonly eventClient: DynamicClient
  readonly recorder: EventRecorder
  /** Names every 403: the controllers needing the right (bound by `Engine.start`). */
  readonly forbidden: ForbiddenRequests
  /** The shared services; its `applier` is final unless `loadApplier` is set. */
  readonly context: EngineContext
  /**
   * Set for server-side apply, whose applier is loaded only when an engine uses it: resolves to
   * the applier that replaces `context.applier` before any controller starts.
   */
  readonly loadApplier?: () => Promise<ChildApplier>
}

/**
 * `metacontroller-ts`, or `metacontroller-ts/<replica>` for a named replica: the audit log tells
 * replicas apart, and the server still derives the field manager `metacontroller-ts` from it.
 */
function engineUserAgent(replicaIdentity: string | undefined): string {
  return replicaIdentity === undefined
    ? ENGINE_FIELD_MANAGER
    : `${ENGINE_FIELD_MANAGER}/${replicaIdentity}`
}

/**
 * The engine's shared informers: objects compacted (managedFields dropped), streaming initial
 * lists unless `watchList` is false, list and watch failures logged.
 */
function engineInformers(
  client: DynamicClient,
  metrics: RuntimeMetrics,
  log: Logger,
  watchList: boolean,
  factory: ListWatcherFactory = (ref, scope) => dynamicListWatcher(client, ref, scope)
): SharedInformers {
  return new SharedInformers(factory, {
    // The engine never reads managedFields; dropping them halves the cache. The compact layout
    // and shared strings save about 1 MiB more at 1,000 parents (docs/performance.md).
    transform: objectCompactor(),
    watchList,
    observer: metrics.informerObserver({
      onError: (resource, error, retryInMs) => {
        // A 403 is named once by ForbiddenRequests, not on every retry.
        if (!isForbidden(error)) log.warn('watch failed; retrying', { resource, error, retryInMs })
      },
      onHandlerError: (resource, error) => {
        log.error('event handler failed', { resource, error })
      },
      onWatchListFallback: (resource, error) => {
        log.info('the API server refused a streaming list; listing this resource instead', {
          resource,
          error,
        })
      },
    }),
  })
}

/** Stands in for the server-side applier until the engine has loaded it (at `start()`). */
const NOT_LOADED_APPLIER: ChildApplier = {
  strategy: 'server-side-apply',
  writes: () => {
    throw new Error('the server-side applier is loaded by start(): start the engine first')
  },
  forget: () => undefined,
  isUpToDate: () => false,
}

/**
 * How the engine writes desired children (`--apply-strategy`): the dynamic apply at once; the
 * server-side applier behind a dynamic import, so an engine that does not use it never loads it.
 */
function engineApplier(
  strategy: ApplyStrategy,
  client: DynamicClient,
  log: Logger,
  fieldManager: string | undefined
): { applier: ChildApplier; loadApplier?: () => Promise<ChildApplier> } {
  if (strategy !== 'server-side-apply') return { applier: dynamicApplier }
  const loadApplier = async (): Promise<ChildApplier> => {
    const { ServerSideApplier } = await import('./children/server-side-applier.js')
    return new ServerSideApplier({
      client,
      log,
      ...(fieldManager === undefined || fieldManager === '' ? {} : { fieldManager }),
    })
  }
  return { applier: NOT_LOADED_APPLIER, loadApplier }
}

/** Refuses writes while the replica does not lead (the transports' `beforeWrite`). */
function guardWrites(leadership: EngineLeadership): (method: string, path: string) => void {
  return (method, path) => {
    if (!leadership.canWrite())
      throw new NotLeaderError(`${method} ${path} refused: this replica does not lead`)
  }
}

/** A transport with the engine's user agent, its own budget and, when led, the write guard. */
function engineTransport(
  config: ClusterConfig,
  options: EngineOptions,
  observer: RequestObserver,
  limiter: RequestLimiter | undefined
): KubeTransport {
  const { leadership } = options
  return new KubeTransport(config, {
    observer,
    // The server names the field manager of the engine's plain writes after it.
    userAgent: engineUserAgent(options.replicaIdentity),
    ...(limiter === undefined ? {} : { limiter }),
    ...(leadership === undefined ? {} : { beforeWrite: guardWrites(leadership) }),
  })
}

/** The options' settings of the hook calls, the target selector and the replica's role. */
function contextSettings(options: EngineOptions) {
  const { leadership } = options
  return {
    workers: options.workers ?? 5,
    cacheFlushIntervalMs: options.cacheFlushIntervalMs ?? 30 * 60_000,
    targetSelector:
      options.targetLabelSelector === undefined || options.targetLabelSelector === ''
        ? (): boolean => true
        : compileLabelSelector(parseSelectorString(options.targetLabelSelector)),
    hookResponseLimitBytes: options.hookResponseLimitBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    ...(options.hookAddresses === undefined ? {} : { hookAddresses: options.hookAddresses }),
    ...(options.hookProxy === undefined ? {} : { hookProxy: options.hookProxy }),
    hookMaxInFlight: options.hookMaxInFlight ?? DEFAULT_HOOK_MAX_IN_FLIGHT,
    ...(leadership === undefined ? {} : { leading: leadership.leading }),
    ...(options.shard === undefined ? {} : { shard: options.shard }),
    ...(options.onSync === undefined ? {} : { onSync: options.onSync }),
    revisionNamespace: options.revisionNamespace ?? DEFAULT_REVISION_NAMESPACE,
  }
}

/**
 * Builds an engine's services; nothing is started and no request is made.
 *
 * @remarks
 * Budgets as client-go's: the dynamic client, the discovery client and the event broadcaster's
 * client each have a token bucket of their own at the configured rate, so discovery refreshes and
 * events never delay child writes (watches take no token at all).
 */
export function buildEngineServices(
  config: ClusterConfig,
  options: EngineOptions,
  strategy: ApplyStrategy
): EngineServices {
  const metrics = options.metrics ?? new RuntimeMetrics()
  // Upstream's hook and reconcile series are on /metrics from the start, as before any hook call.
  hookMetricsFor(metrics.registry)
  const rate = options.clientRateLimit ?? DEFAULT_CLIENT_RATE_LIMIT
  const makeLimiter = options.makeLimiter ?? ((_client, r) => tokenBucketLimiter(r))
  const log = options.log ?? silentLogger
  const forbidden = new ForbiddenRequests({ log, registry: metrics.registry })
  const observer = observeForbidden(
    loggingRequestObserver(log, metrics.requestObserver(new URL(config.server).host)),
    forbidden
  )
  const transport = engineTransport(config, options, observer, makeLimiter('objects', rate))
  const client = new DynamicClient(transport)
  const eventClient = new DynamicClient(
    engineTransport(config, options, observer, makeLimiter('events', rate))
  )
  const { leadership } = options
  const recorder = new EventRecorder(eventClient, {
    log,
    ...(options.eventsBurst === undefined ? {} : { burst: options.eventsBurst }),
    ...(options.eventsQps === undefined ? {} : { qps: options.eventsQps }),
    ...(leadership === undefined ? {} : { enabled: () => leadership.canWrite() }),
  })
  const { applier, loadApplier } = engineApplier(strategy, client, log, options.ssaFieldManager)
  const watches = options.shard?.watches
  const watchList = options.watchList ?? true
  const context: EngineContext = {
    client,
    discovery: new Discovery(transport.withLimiter(makeLimiter('discovery', rate)), {
      refreshIntervalMs: options.discoveryIntervalMs ?? 30_000,
      onError: (groupVersion, error) => {
        log.warn('discovery failed for a group version', { groupVersion, error })
      },
    }),
    informers: engineInformers(client, metrics, log, watchList),
    ...(watches === undefined
      ? {}
      : {
          shardedInformers: engineInformers(
            client,
            metrics,
            log,
            watchList,
            watches.listWatchers(client)
          ),
        }),
    ...(watches?.childListWatchers === undefined
      ? {}
      : {
          childInformers: engineInformers(
            client,
            metrics,
            log,
            watchList,
            watches.childListWatchers(client)
          ),
        }),
    events: recorder,
    log,
    metrics,
    ...contextSettings(options),
    applier,
  }
  return {
    transport,
    metrics,
    eventClient,
    recorder,
    forbidden,
    context,
    ...(loadApplier === undefined ? {} : { loadApplier }),
  }
}
