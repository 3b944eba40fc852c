/**
 * The Metacontroller-compatible engine: one process that serves every CompositeController and
 * DecoratorController in the cluster (webhook hooks in any language) and any controllers defined
 * in TypeScript (in-process hooks, no HTTP hop), through one pipeline.
 *
 * @example
 * ```ts
 * const engine = await Engine.connect({ kubeconfig: process.env.KUBECONFIG })
 * await engine.start()
 * await engine.addCompositeController({
 *   name: 'podservice',
 *   spec: { parentResource: { apiVersion: 'homelabz.com.br/v1', resource: 'podservices' },
 *           childResources: [{ apiVersion: 'v1', resource: 'pods' }], generateSelector: true,
 *           hooks: { sync: {} } },
 *   hooks: { sync: async (request) => ({ status: {}, children: [], resyncAfterMs: 0, finalized: false }) },
 * })
 * ```
 *
 * @module
 */
import type { ProxyResolver } from '../kube/proxy/proxy-resolver.js'
import type { KubeObject } from '../core/kube-object.js'
import { compileLabelSelector, parseSelectorString } from '../core/label-selector.js'
import { parseCompositeControllerSpec } from '../api/composite-controller-spec.js'
import type { ClusterConfig } from '../kube/cluster-config.js'
import { loggingRequestObserver } from './request-log.js'
import { ForbiddenRequests } from './forbidden/forbidden-requests.js'
import { forbiddenCaches, notReadyCaches, observeForbidden } from './forbidden/cache-readiness.js'
import { isForbidden } from './forbidden/is-forbidden.js'
import type { RequestObserver } from '../kube/kube-transport.js'
import { Discovery } from '../kube/discovery.js'
import { DynamicClient } from '../kube/dynamic-client.js'
import { KubeTransport } from '../kube/kube-transport.js'
import type { RequestLimiter } from '../kube/kube-transport.js'
import { loadClusterConfig } from '../kube/load-cluster-config.js'
import { dynamicListWatcher } from '../runtime/informers/list-watcher.js'
import { stripManagedFields } from '../runtime/informers/informer.js'
import type { Logger } from '../runtime/diagnostics/logger.js'
import { silentLogger } from '../runtime/diagnostics/logger.js'
import { RuntimeMetrics } from '../runtime/metrics/runtime-metrics.js'
import { SharedInformers } from '../runtime/informers/shared-informers.js'
import type {
  ListWatcherFactory,
  SharedInformerStatus,
} from '../runtime/informers/shared-informers.js'
import {
  DEFAULT_CLIENT_RATE_LIMIT,
  tokenBucketLimiter,
} from '../runtime/rate-limit/token-bucket-limiter.js'
import type { ClientRateLimit } from '../runtime/rate-limit/token-bucket-limiter.js'
import { parseDecoratorControllerSpec } from '../api/decorator-controller-spec.js'
import { UnknownResourceError } from '../kube/unknown-resource-error.js'
import { NotLeaderError } from '../runtime/leader/leader-election.js'
import type { ApplyStrategy, ChildApplier } from './children/child-applier.js'
import { ENGINE_FIELD_MANAGER, parseApplyStrategy } from './children/child-applier.js'
import { dynamicApplier } from './children/dynamic-applier.js'
import { ServerSideApplier } from './children/server-side-applier.js'
import type { CompositeHooks, DecoratorHooks } from '../api/controller-hooks.js'
import { compositeMetaKind } from './composite/composite-meta-kind.js'
import { startCompositeController } from './composite/start-composite-controller.js'
import { decoratorMetaKind } from './decorator/decorator-meta-kind.js'
import { startDecoratorController } from './decorator/start-decorator-controller.js'
import type { EngineContext } from './engine-context.js'
import { EventRecorder } from './events/event-recorder.js'
import type { HostedController } from './loop/start-hosted-controller.js'
import { MetaController } from './meta/meta-controller.js'
import type { MetaKind } from './meta/meta-controller.js'
import type { HookAddressMap } from './hooks/traced-connector.js'
import { DEFAULT_HOOK_MAX_IN_FLIGHT, limitHooks } from './hooks/hook-call-limiter.js'
import { hookLimiterFor } from './hooks/webhook-hooks.js'
import type { ParentShard } from './sharding/parent-shard.js'
import { DEFAULT_MAX_RESPONSE_BYTES } from './hooks/post-webhook.js'
import { hookMetricsFor } from './metrics/hook-metrics.js'
import type { SyncObserver } from './sync/sync-observer.js'

/** The metrics of API requests, with upstream's graded lines (V(4) writes, V(7) discovery). */
function observeRequests(
  metrics: RuntimeMetrics,
  config: ClusterConfig,
  log: Logger
): RequestObserver {
  return loggingRequestObserver(log, metrics.requestObserver(new URL(config.server).host))
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

/** Raised by {@link Engine.start} when the engine cannot start (an unreachable API server). */
export class EngineStartError extends Error {
  override readonly name = 'EngineStartError'
}

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
 * The default home of cluster-scoped parents' ControllerRevisions: `default`, which every
 * cluster has; `metactl run` uses the engine's own namespace when it knows it.
 */
export const DEFAULT_REVISION_NAMESPACE = 'default'

/** Options of {@link Engine}. */
export interface EngineOptions {
  /** Workers per hosted controller (5, upstream `--workers`). */
  readonly workers?: number
  /** Discovery refresh period (30 s, upstream `--discovery-interval`). */
  readonly discoveryIntervalMs?: number
  /** Periodic resync of every parent (30 min, upstream `--cache-flush-interval`). */
  readonly cacheFlushIntervalMs?: number
  /**
   * Client-side API rate limit (1000 qps, burst 2000; see {@link DEFAULT_CLIENT_RATE_LIMIT}),
   * applied to each client's budget separately: objects, discovery and events, as client-go.
   */
  readonly clientRateLimit?: ClientRateLimit
  /**
   * Makes each client's limiter from its rate (a token bucket); tests wrap it to count what each
   * budget spends.
   */
  readonly makeLimiter?: (
    client: EngineClientBudget,
    rate: ClientRateLimit
  ) => RequestLimiter | undefined
  /** Serve CompositeController objects from the cluster (true). */
  readonly watchCompositeControllers?: boolean
  /** Serve DecoratorController objects from the cluster (true, when their CRD is installed). */
  readonly watchDecoratorControllers?: boolean
  /** Only serve CompositeControllers whose labels match (upstream `--target-label-selector`). */
  readonly targetLabelSelector?: string
  /**
   * Where the ControllerRevisions of cluster-scoped parents live ({@link DEFAULT_REVISION_NAMESPACE}).
   * Upstream gives them no namespace, so its rolling updates fail for cluster-scoped parents.
   */
  readonly revisionNamespace?: string
  /**
   * How children are written (upstream `--apply-strategy`): the client-side 3-way
   * `dynamic-apply` (the default; also for `''`) or `server-side-apply`.
   */
  readonly applyStrategy?: ApplyStrategy | ''
  /** The field manager of server-side apply (`metacontroller`, `--apply-strategy-ssa-field-manager`). */
  readonly ssaFieldManager?: string
  readonly log?: Logger
  readonly metrics?: RuntimeMetrics
  /** Events per object allowed in a burst (25, upstream `--events-burst`). */
  readonly eventsBurst?: number
  /** Per-object event refill rate in events/s (1/300, upstream `--events-qps`). */
  readonly eventsQps?: number
  /** Largest hook response body accepted ({@link DEFAULT_MAX_RESPONSE_BYTES}); a larger one fails the sync. */
  readonly hookResponseLimitBytes?: number
  /**
   * Where connections for a hook URL's `host:port` go instead: lets an engine run outside the
   * cluster reach hooks addressed by in-cluster names (development and tests).
   */
  readonly hookAddresses?: HookAddressMap
  /**
   * Decides each webhook call's proxy; when absent, the process's `HTTPS_PROXY`/`HTTP_PROXY`/
   * `NO_PROXY` (read once), as upstream's hook client. `{ resolve: undefined }`: always direct.
   */
  readonly hookProxy?: { readonly resolve: ProxyResolver | undefined }
  /**
   * Concurrent hook calls per hosted controller, its sync, finalize and customize hooks together,
   * webhooks and in-process ones alike ({@link DEFAULT_HOOK_MAX_IN_FLIGHT}); further calls wait.
   */
  readonly hookMaxInFlight?: number
  /**
   * Leader election: hosted controllers keep their caches warm but start their workers only once
   * `leading` settles, and every write (events included) is refused while `canWrite()` is false.
   */
  readonly leadership?: EngineLeadership
  /**
   * Sharding: each hosted controller serves only the parents this replica owns (see
   * `startEngineSharding`, which also gives the `leadership` write guard).
   */
  readonly shard?: ParentShard
  /**
   * This replica's name, appended to the user agent (`metacontroller-ts/<name>`) so the API
   * server's audit log tells replicas apart; the default field manager stays `metacontroller-ts`.
   */
  readonly replicaIdentity?: string
  /**
   * Told, after each sync of any hosted controller, what it did: the hook asked, the plan of its
   * answer, the writes the API server accepted, the error (see `SyncReport`). `metactl dev`
   * prints its lines from it; absent, syncs are not watched at all.
   */
  readonly onSync?: SyncObserver
}

/** How an engine learns whether its replica leads; see {@link EngineOptions.leadership}. */
export interface EngineLeadership {
  /** Settles when this replica starts leading. */
  readonly leading: Promise<void>
  /** Whether this replica may write now. */
  canWrite(): boolean
}

/** A CompositeController defined in TypeScript: a spec and in-process hook functions. */
export interface InProcessCompositeController {
  readonly name: string
  /** The spec as it would appear in a CompositeController (`hooks` entries may be `{}`). */
  readonly spec: unknown
  readonly hooks: CompositeHooks
}

/** A DecoratorController defined in TypeScript: a spec and in-process hook functions. */
export interface InProcessDecoratorController {
  readonly name: string
  /** The spec as it would appear in a DecoratorController (`hooks` entries may be `{}`). */
  readonly spec: unknown
  readonly hooks: DecoratorHooks
}

/** The engine's shared informers: managedFields dropped, list and watch failures logged. */
function engineInformers(
  client: DynamicClient,
  metrics: RuntimeMetrics,
  log: Logger,
  factory: ListWatcherFactory = (ref, scope) => dynamicListWatcher(client, ref, scope)
): SharedInformers {
  return new SharedInformers(factory, {
    // The engine never reads managedFields; dropping them halves the cache.
    transform: stripManagedFields,
    observer: metrics.informerObserver({
      onError: (resource, error, retryInMs) => {
        // A 403 is named once by ForbiddenRequests, not on every retry.
        if (!isForbidden(error)) log.warn('watch failed; retrying', { resource, error, retryInMs })
      },
      onHandlerError: (resource, error) => {
        log.error('event handler failed', { resource, error })
      },
    }),
  })
}

/** How the engine writes desired children (`--apply-strategy`). */
function engineApplier(
  strategy: ApplyStrategy,
  client: DynamicClient,
  log: Logger,
  fieldManager: string | undefined
): ChildApplier {
  if (strategy !== 'server-side-apply') return dynamicApplier
  return new ServerSideApplier({
    client,
    log,
    ...(fieldManager === undefined || fieldManager === '' ? {} : { fieldManager }),
  })
}

/** The running engine. */
export class Engine {
  /** The transport to the cluster. */
  readonly transport: KubeTransport
  /** Metrics of the client, informers and work queues. */
  readonly metrics: RuntimeMetrics
  readonly #context: EngineContext
  readonly #options: EngineOptions
  readonly #inProcess = new Map<string, HostedController>()
  readonly #metas: {
    stop(): Promise<void>
    runningControllers(): string[]
    controllerObjects(): KubeObject[]
  }[] = []
  readonly #forbidden: ForbiddenRequests
  #recorder: EventRecorder
  /** The event recorder's own client: its own token bucket, as upstream's event broadcaster. */
  readonly #eventClient: DynamicClient
  #started = false

  /**
   * Builds an engine; nothing is started.
   *
   * @throws Error when `applyStrategy` is not a known strategy.
   */
  constructor(config: ClusterConfig, options: EngineOptions = {}) {
    this.#options = options
    const strategy = parseApplyStrategy(options.applyStrategy)
    this.metrics = options.metrics ?? new RuntimeMetrics()
    // Upstream's hook and reconcile series are on /metrics from the start, as before any hook call.
    hookMetricsFor(this.metrics.registry)
    const leadership = options.leadership
    // Budgets as client-go's: the dynamic client, the discovery client and the event
    // broadcaster's client each have a token bucket of their own at the configured rate, so
    // discovery refreshes and events never delay child writes (watches take no token at all).
    const rate = options.clientRateLimit ?? DEFAULT_CLIENT_RATE_LIMIT
    const makeLimiter = options.makeLimiter ?? ((_client, r) => tokenBucketLimiter(r))
    const limiter = makeLimiter('objects', rate)
    const log = options.log ?? silentLogger
    this.#forbidden = new ForbiddenRequests({ log, registry: this.metrics.registry })
    const observer = observeForbidden(observeRequests(this.metrics, config, log), this.#forbidden)
    this.transport = new KubeTransport(config, {
      observer,
      // The server names the field manager of the engine's plain writes after it.
      userAgent: engineUserAgent(options.replicaIdentity),
      ...optionalLimiter(limiter),
      ...(leadership === undefined ? {} : { beforeWrite: guardWrites(leadership) }),
    })
    const client = new DynamicClient(this.transport)
    this.#eventClient = new DynamicClient(
      new KubeTransport(config, {
        observer,
        userAgent: engineUserAgent(options.replicaIdentity),
        ...optionalLimiter(makeLimiter('events', rate)),
        ...(leadership === undefined ? {} : { beforeWrite: guardWrites(leadership) }),
      })
    )
    this.#recorder = new EventRecorder(this.#eventClient, {
      log,
      ...(options.eventsBurst === undefined ? {} : { burst: options.eventsBurst }),
      ...(options.eventsQps === undefined ? {} : { qps: options.eventsQps }),
      ...(leadership === undefined ? {} : { enabled: () => leadership.canWrite() }),
    })
    const target =
      options.targetLabelSelector === undefined || options.targetLabelSelector === ''
        ? (): boolean => true
        : compileLabelSelector(parseSelectorString(options.targetLabelSelector))
    this.#context = {
      client,
      discovery: new Discovery(this.transport.withLimiter(makeLimiter('discovery', rate)), {
        refreshIntervalMs: options.discoveryIntervalMs ?? 30_000,
        onError: (groupVersion, error) => {
          log.warn('discovery failed for a group version', { groupVersion, error })
        },
      }),
      informers: engineInformers(client, this.metrics, log),
      ...(options.shard?.watches === undefined
        ? {}
        : {
            shardedInformers: engineInformers(
              client,
              this.metrics,
              log,
              options.shard.watches.listWatchers(client)
            ),
          }),
      events: this.#recorder,
      log,
      metrics: this.metrics,
      workers: options.workers ?? 5,
      cacheFlushIntervalMs: options.cacheFlushIntervalMs ?? 30 * 60_000,
      targetSelector: target,
      hookResponseLimitBytes: options.hookResponseLimitBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      ...(options.hookAddresses === undefined ? {} : { hookAddresses: options.hookAddresses }),
      ...(options.hookProxy === undefined ? {} : { hookProxy: options.hookProxy }),
      hookMaxInFlight: options.hookMaxInFlight ?? DEFAULT_HOOK_MAX_IN_FLIGHT,
      ...(leadership === undefined ? {} : { leading: leadership.leading }),
      ...(options.shard === undefined ? {} : { shard: options.shard }),
      ...(options.onSync === undefined ? {} : { onSync: options.onSync }),
      revisionNamespace: options.revisionNamespace ?? DEFAULT_REVISION_NAMESPACE,
      applier: engineApplier(strategy, client, log, options.ssaFieldManager),
    }
  }

  /** Loads a kubeconfig (or in-cluster config) and builds an engine for it. */
  static async connect(
    options: EngineOptions & { readonly kubeconfig?: string; readonly context?: string } = {}
  ): Promise<Engine> {
    const config = await loadClusterConfig({
      ...(options.kubeconfig === undefined ? {} : { kubeconfig: options.kubeconfig }),
      ...(options.context === undefined ? {} : { context: options.context }),
    })
    return new Engine(config, options)
  }

  /** The shared services, for diagnostics. */
  get context(): EngineContext {
    return this.#context
  }

  /**
   * Checks the API server answers, loads discovery, and starts serving CompositeControllers.
   *
   * @remarks
   * Upstream makes up to 6 attempts 5 s apart to reach the API server before giving up, so a
   * start-up failure is reported within about 55 s. `signal` (shutdown) ends the wait at once.
   *
   * @throws EngineStartError when the API server cannot be reached.
   */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.#started) return
    const { discovery, log, events } = this.#context
    this.#forbidden.bind({
      events,
      controllers: () => this.#metas.flatMap((m) => m.controllerObjects()),
    })
    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted()
      try {
        await this.transport.requestJson({
          method: 'GET',
          path: '/api',
          timeoutMs: 5000,
          ...(signal === undefined ? {} : { signal }),
        })
        break
      } catch (error) {
        signal?.throwIfAborted()
        if (attempt >= 6)
          throw new EngineStartError(
            `cannot reach the API server at ${this.transport.config.server} after ${attempt} ` +
              `attempts: ${error instanceof Error ? error.message : String(error)}`,
            { cause: error }
          )
        log.warn('API server not reachable yet', { attempt, error })
        await abortableDelay(5000, signal)
      }
    }
    await discovery.refresh(signal)
    discovery.start()
    this.#started = true
    if (this.#options.watchCompositeControllers !== false)
      await this.#startMeta(compositeMetaKind, signal)
    if (this.#options.watchDecoratorControllers !== false)
      await this.#startMeta(decoratorMetaKind, signal)
    log.info('engine started', { server: this.transport.config.server })
  }

  /** Starts serving one kind of controller object, when its CRD is installed. */
  async #startMeta<Definition>(
    kind: MetaKind<Definition>,
    signal: AbortSignal | undefined
  ): Promise<void> {
    const { group, version, resource } = kind.resource
    const apiVersion = `${group}/${version}`
    try {
      await this.#context.discovery.resolveResource(apiVersion, resource, signal)
    } catch (error) {
      if (!(error instanceof UnknownResourceError)) throw error
      // Without the CRD there is nothing to watch; a list would fail until it appears.
      this.#context.log.warn(`${kind.kind}s are not served: their CRD is not installed`, {
        resource: `${resource}.${group}`,
        hint: 'kubectl apply -k deploy/crds, then restart the engine',
      })
      return
    }
    const meta = new MetaController(this.#context, kind)
    // Pushed first, so a stop() during the first list still stops this meta level.
    this.#metas.push(meta)
    await meta.start(signal)
  }

  /** Every shared informer's state, sharded ones included. */
  #informerStatus(): SharedInformerStatus[] {
    const { informers, shardedInformers } = this.#context
    return [...informers.status(), ...(shardedInformers?.status() ?? [])]
  }

  /**
   * Why the engine is not ready (`/readyz`): caches not synced yet, except those RBAC forbids
   * (`forbidden/cache-readiness.ts`); empty when ready.
   */
  notReady(): string[] {
    return notReadyCaches(this.#informerStatus(), this.#forbidden.forbiddenCollections())
  }

  /** The unsynced caches `notReady` leaves out because RBAC forbids them (`/readyz?verbose`). */
  forbiddenNotReady(): string[] {
    return forbiddenCaches(this.#informerStatus(), this.#forbidden.forbiddenCollections())
  }

  /**
   * Why the engine is not alive (`/healthz`): a synced cache that heard nothing from the API
   * server, not even a bookmark, for `staleAfterMs` (10 min) keeps failing to list or watch.
   * Event-loop stalls are the process's, not the engine's: `metactl run` adds them
   * (`EventLoopWatchdog`).
   */
  unhealthy(staleAfterMs: number = 10 * 60_000): string[] {
    return this.#informerStatus()
      .filter((s) => s.synced && (s.lastEventAgeMs ?? 0) > staleAfterMs)
      .map(
        (s) =>
          `${s.description}: no list or watch event for ${Math.round((s.lastEventAgeMs ?? 0) / 1000)} s`
      )
  }

  /** Names of the running hosted controllers (cluster objects and in-process ones). */
  runningControllers(): string[] {
    return [...this.#metas.flatMap((m) => m.runningControllers()), ...this.#inProcess.keys()].sort()
  }

  /**
   * Starts a CompositeController whose hooks are TypeScript functions; resolves once its caches
   * are synced. No CompositeController object is needed in the cluster.
   */
  async addCompositeController(definition: InProcessCompositeController): Promise<void> {
    if (!this.#started) throw new Error('start() the engine before adding controllers')
    if (this.#inProcess.has(definition.name))
      throw new Error(`controller ${definition.name} is already running`)
    const spec = parseCompositeControllerSpec(definition.spec)
    const controller: KubeObject = {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: definition.name },
      spec: definition.spec,
      status: {},
    }
    const hosted = await startCompositeController(this.#context, {
      name: definition.name,
      controller,
      spec,
      hooks: this.#limited(definition.hooks, definition.name, 'CompositeController'),
      finalizerEnabled: definition.hooks.finalize !== undefined,
    })
    this.#inProcess.set(definition.name, hosted)
  }

  /**
   * Starts a DecoratorController whose hooks are TypeScript functions (e.g. from the SDK's
   * `inProcessDecoratorHooks`); resolves once its caches are synced. No DecoratorController object
   * is needed in the cluster.
   */
  async addDecoratorController(definition: InProcessDecoratorController): Promise<void> {
    if (!this.#started) throw new Error('start() the engine before adding controllers')
    if (this.#inProcess.has(definition.name))
      throw new Error(`controller ${definition.name} is already running`)
    const spec = parseDecoratorControllerSpec(definition.spec)
    const controller: KubeObject = {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'DecoratorController',
      metadata: { name: definition.name },
      spec: definition.spec,
      status: {},
    }
    const hosted = await startDecoratorController(this.#context, {
      name: definition.name,
      controller,
      spec,
      hooks: this.#limited(definition.hooks, definition.name, 'DecoratorController'),
      finalizerEnabled: definition.hooks.finalize !== undefined,
    })
    this.#inProcess.set(definition.name, hosted)
  }

  /** In-process hooks under the same per-controller cap as webhooks (`hookMaxInFlight`). */
  #limited<Hooks extends CompositeHooks | DecoratorHooks>(
    hooks: Hooks,
    name: string,
    type: 'CompositeController' | 'DecoratorController'
  ): Hooks {
    const { hookMaxInFlight, metrics } = this.#context
    const limiter = hookLimiterFor(
      hookMaxInFlight,
      metrics && hookMetricsFor(metrics.registry),
      name,
      type
    )
    return limiter === undefined ? hooks : limitHooks(hooks, limiter)
  }

  /** Stops an in-process controller of either kind. */
  async removeCompositeController(name: string): Promise<void> {
    const hosted = this.#inProcess.get(name)
    this.#inProcess.delete(name)
    await hosted?.stop()
  }

  /** Stops an in-process DecoratorController. */
  async removeDecoratorController(name: string): Promise<void> {
    await this.removeCompositeController(name)
  }

  /**
   * Stops everything: controllers (letting in-flight syncs finish), informers, discovery.
   *
   * @param onWritesStopped - Runs once no write can come any more (syncs done, events flushed)
   *   and before the slower teardown, e.g. to release a leader-election Lease early.
   */
  async stop(onWritesStopped?: () => Promise<void>): Promise<void> {
    await Promise.all(this.#metas.map((meta) => meta.stop()))
    await Promise.all([...this.#inProcess.values()].map((h) => h.stop()))
    this.#inProcess.clear()
    await this.#recorder.flush()
    await onWritesStopped?.()
    await this.#context.informers.stopAll()
    await this.#context.shardedInformers?.stopAll()
    this.#context.discovery.stop()
    await this.#recorder.flush()
    await Promise.all([this.transport.close(), this.#eventClient.transport.close()])
  }
}

/** The engine's API clients that each have a rate-limit budget of their own. */
export type EngineClientBudget = 'objects' | 'discovery' | 'events'

/** Refuses writes while the replica does not lead (the transports' `beforeWrite`). */
function guardWrites(leadership: EngineLeadership): (method: string, path: string) => void {
  return (method, path) => {
    if (!leadership.canWrite())
      throw new NotLeaderError(`${method} ${path} refused: this replica does not lead`)
  }
}

function optionalLimiter(limiter: RequestLimiter | undefined): { limiter?: RequestLimiter } {
  return limiter === undefined ? {} : { limiter }
}
