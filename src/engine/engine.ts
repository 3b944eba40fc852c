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
import type { KubeObject } from '../core/kube-object.js'
import { parseCompositeControllerSpec } from '../api/composite-controller-spec.js'
import { parseDecoratorControllerSpec } from '../api/decorator-controller-spec.js'
import type { CompositeHooks, DecoratorHooks } from '../api/controller-hooks.js'
import type { ClusterConfig } from '../kube/cluster-config.js'
import type { DynamicClient } from '../kube/dynamic-client.js'
import type { KubeTransport } from '../kube/kube-transport.js'
import { loadClusterConfig } from '../kube/load-cluster-config.js'
import { UnknownResourceError } from '../kube/unknown-resource-error.js'
import type { SharedInformerStatus } from '../runtime/informers/shared-informers.js'
import type { RuntimeMetrics } from '../runtime/metrics/runtime-metrics.js'
import { awaitApiServer } from './await-api-server.js'
import type { ChildApplier } from './children/child-applier.js'
import { parseApplyStrategy } from './children/child-applier.js'
import { compositeMetaKind } from './composite/composite-meta-kind.js'
import { startCompositeController } from './composite/start-composite-controller.js'
import { decoratorMetaKind } from './decorator/decorator-meta-kind.js'
import { startDecoratorController } from './decorator/start-decorator-controller.js'
import type { EngineContext } from './engine-context.js'
import type {
  EngineOptions,
  InProcessCompositeController,
  InProcessDecoratorController,
} from './engine-options.js'
import { buildEngineServices } from './engine-services.js'
import type { EventRecorder } from './events/event-recorder.js'
import type { ForbiddenRequests } from './forbidden/forbidden-requests.js'
import { forbiddenCaches, notReadyCaches } from './forbidden/cache-readiness.js'
import { limitHooks } from './hooks/hook-call-limiter.js'
import { hookLimiterFor } from './hooks/webhook-hooks.js'
import type { HostedController } from './loop/start-hosted-controller.js'
import { MetaController } from './meta/meta-controller.js'
import type { MetaKind } from './meta/meta-controller.js'
import { hookMetricsFor } from './metrics/hook-metrics.js'

export { EngineStartError } from './await-api-server.js'
export { DEFAULT_REVISION_NAMESPACE } from './engine-options.js'
export type { EngineLeadership } from './leadership/engine-leadership.js'
export type {
  EngineClientBudget,
  EngineOptions,
  InProcessCompositeController,
  InProcessDecoratorController,
} from './engine-options.js'

/** The running engine. */
export class Engine {
  /** The transport to the cluster. */
  readonly transport: KubeTransport
  /** Metrics of the client, informers and work queues. */
  readonly metrics: RuntimeMetrics
  #context: EngineContext
  readonly #options: EngineOptions
  readonly #inProcess = new Map<string, HostedController>()
  readonly #metas: {
    stop(): Promise<void>
    runningControllers(): string[]
    controllerObjects(): KubeObject[]
  }[] = []
  readonly #forbidden: ForbiddenRequests
  readonly #recorder: EventRecorder
  /** The event recorder's own client: its own token bucket, as upstream's event broadcaster. */
  readonly #eventClient: DynamicClient
  /** Loads the applier of a strategy that is loaded only when used (server-side apply). */
  readonly #loadApplier: (() => Promise<ChildApplier>) | undefined
  #started = false

  /**
   * Builds an engine; nothing is started.
   *
   * @throws Error when `applyStrategy` is not a known strategy.
   */
  constructor(config: ClusterConfig, options: EngineOptions = {}) {
    this.#options = options
    const services = buildEngineServices(config, options, parseApplyStrategy(options.applyStrategy))
    this.transport = services.transport
    this.metrics = services.metrics
    this.#eventClient = services.eventClient
    this.#recorder = services.recorder
    this.#forbidden = services.forbidden
    this.#context = services.context
    this.#loadApplier = services.loadApplier
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
    const controllers = (): KubeObject[] => this.#metas.flatMap((m) => m.controllerObjects())
    this.#forbidden.bind({ events, controllers })
    await awaitApiServer(this.transport, log, signal)
    if (this.#loadApplier !== undefined)
      this.#context = { ...this.#context, applier: await this.#loadApplier() }
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
    const { informers, shardedInformers, childInformers } = this.#context
    return [
      ...informers.status(),
      ...(shardedInformers?.status() ?? []),
      ...(childInformers?.status() ?? []),
    ]
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
    await this.#context.childInformers?.stopAll()
    this.#context.discovery.stop()
    await this.#recorder.flush()
    await Promise.all([this.transport.close(), this.#eventClient.transport.close()])
  }
}
