/**
 * What an engine is configured with: its options, the leadership it may be given, and the
 * controllers defined in TypeScript that it can host.
 *
 * @module
 */
import type { CompositeHooks, DecoratorHooks } from '../api/controller-hooks.js'
import type { ProxyResolver } from '../kube/proxy/proxy-resolver.js'
import type { RequestLimiter } from '../kube/kube-transport.js'
import type { Logger } from '../runtime/diagnostics/logger.js'
import type { RuntimeMetrics } from '../runtime/metrics/runtime-metrics.js'
import type { ClientRateLimit } from '../runtime/rate-limit/token-bucket-limiter.js'
import type { ApplyStrategy } from './children/child-applier.js'
import type { HookAddressMap } from './hooks/traced-connector.js'
import type { ParentShard } from './sharding/parent-shard.js'
import type { SyncObserver } from './sync/sync-observer.js'
import type { EngineLeadership } from './leadership/engine-leadership.js'

/**
 * The default home of cluster-scoped parents' ControllerRevisions: `default`, which every
 * cluster has; `metactl run` uses the engine's own namespace when it knows it.
 */
export const DEFAULT_REVISION_NAMESPACE = 'default'

/** Options of the engine (`Engine`). */
export interface EngineOptions {
  /** Workers per hosted controller (5, upstream `--workers`). */
  readonly workers?: number
  /** Discovery refresh period (30 s, upstream `--discovery-interval`). */
  readonly discoveryIntervalMs?: number
  /** Periodic resync of every parent (30 min, upstream `--cache-flush-interval`). */
  readonly cacheFlushIntervalMs?: number
  /**
   * Client-side API rate limit (1000 qps, burst 2000; see `DEFAULT_CLIENT_RATE_LIMIT`),
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
  /**
   * Only serve CompositeControllers and DecoratorControllers whose labels match (upstream
   * `--target-label-selector`).
   */
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
  /**
   * Informers take their lists as streaming initial lists (KEP-3157 WatchList) where the API
   * server allows them, listing where it refuses (true; `--feature-gates=WatchListClient=false`).
   */
  readonly watchList?: boolean
  /** Events per object allowed in a burst (25, upstream `--events-burst`). */
  readonly eventsBurst?: number
  /** Per-object event refill rate in events/s (1/300, upstream `--events-qps`). */
  readonly eventsQps?: number
  /** Largest hook response body accepted (`DEFAULT_MAX_RESPONSE_BYTES`); a larger one fails the sync. */
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
   * webhooks and in-process ones alike (`DEFAULT_HOOK_MAX_IN_FLIGHT`); further calls wait.
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

export type { EngineLeadership } from './leadership/engine-leadership.js'

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

/** The engine's API clients that each have a rate-limit budget of their own. */
export type EngineClientBudget = 'objects' | 'discovery' | 'events'
