import type { ProxyResolver } from '../kube/proxy/proxy-resolver.js'
import type { KubeObject } from '../core/kube-object.js'
import type { CompositeControllerSpec } from '../api/composite-controller-spec.js'
import type { Discovery } from '../kube/discovery.js'
import type { DynamicClient } from '../kube/dynamic-client.js'
import type { Logger } from '../runtime/diagnostics/logger.js'
import type { RuntimeMetrics } from '../runtime/metrics/runtime-metrics.js'
import type { SharedInformers } from '../runtime/informers/shared-informers.js'
import type { DecoratorControllerSpec } from '../api/decorator-controller-spec.js'
import type { CompositeHooks, DecoratorHooks } from '../api/controller-hooks.js'
import type { EventSink } from './events/event-recorder.js'
import type { ChildApplier } from './children/child-applier.js'
import type { HookAddressMap } from './hooks/traced-connector.js'
import type { ParentShard } from './sharding/parent-shard.js'
import type { SyncObserver } from './sync/sync-observer.js'

/** The shared services every hosted controller of one engine uses. */
export interface EngineContext {
  readonly client: DynamicClient
  readonly discovery: Discovery
  readonly informers: SharedInformers
  /** Informers of server-side sharded collections (`shard.watches`); absent without. */
  readonly shardedInformers?: SharedInformers
  /** Informers of children that follow their parents' shard buckets (`shard.watches`); absent without. */
  readonly childInformers?: SharedInformers
  readonly events: EventSink
  readonly log: Logger
  readonly metrics: RuntimeMetrics | undefined
  /** Workers per hosted controller. */
  readonly workers: number
  /** Periodic resync of every parent when a controller sets no shorter `resyncPeriodSeconds`. */
  readonly cacheFlushIntervalMs: number
  /**
   * Which CompositeControllers and DecoratorControllers this engine serves
   * (`--target-label-selector`).
   */
  readonly targetSelector: (labels: Readonly<Record<string, string>>) => boolean
  /**
   * Settles when this replica leads (leader election); hosted controllers sync their caches at
   * once but start their workers only then. Undefined: always leading.
   */
  readonly leading?: Promise<void>
  /** Largest hook response body accepted, in bytes. */
  readonly hookResponseLimitBytes?: number
  /**
   * Where the ControllerRevisions of cluster-scoped parents live (`--revision-namespace`);
   * a namespaced parent's live in its own namespace.
   */
  readonly revisionNamespace: string
  /** How every hosted controller writes desired children (`--apply-strategy`). */
  readonly applier: ChildApplier
  /** Where connections for a hook URL's `host:port` go instead (`--hook-address`). */
  readonly hookAddresses?: HookAddressMap
  /** Decides each hook call's proxy; absent: the process's proxy environment. */
  readonly hookProxy?: { readonly resolve: ProxyResolver | undefined }
  /** Concurrent hook calls per hosted controller (`--hook-max-in-flight`); undefined: no cap. */
  readonly hookMaxInFlight?: number
  /** This replica's share of the parents (`--sharding`); undefined: every parent. */
  readonly shard?: ParentShard
  /** Told what each sync of every hosted controller did (`EngineOptions.onSync`). */
  readonly onSync?: SyncObserver
}

/** A CompositeController ready to run: from a cluster object, or defined in TypeScript. */
export interface CompositeControllerDefinition {
  readonly name: string
  /** The object sent to hooks as `controller`. */
  readonly controller: KubeObject
  readonly spec: CompositeControllerSpec
  readonly hooks: CompositeHooks
  readonly finalizerEnabled: boolean
}

/** A DecoratorController ready to run: from a cluster object, or defined in TypeScript. */
export interface DecoratorControllerDefinition {
  readonly name: string
  /** The object sent to hooks as `controller`. */
  readonly controller: KubeObject
  readonly spec: DecoratorControllerSpec
  readonly hooks: DecoratorHooks
  readonly finalizerEnabled: boolean
}
