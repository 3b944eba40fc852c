/**
 * The one generic parent loop every hosted controller runs: informers for the parents and the
 * children, event handlers that turn changes into parent keys, a fair work queue, workers, and a
 * periodic resync. What a key means and how it is synced is the {@link ControllerKind}'s job:
 * `compositeKind` and `decoratorKind` are the two strategies plugged into this loop.
 *
 * @module
 */
import { waitForSyncProgress } from '../../runtime/informers/wait-for-sync-progress.js'
import type { KubeObject } from '../../core/kube-object.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import { ControllerLoop } from '../../runtime/queue/controller-loop.js'
import type {
  Action,
  ControllerLoopObserver,
  ReconcileContext,
} from '../../runtime/queue/controller-loop.js'
import type { Informer, InformerHandlers } from '../../runtime/informers/informer.js'
import type { ListWatchScope } from '../../runtime/informers/list-watcher.js'
import type { SharedInformers, InformerLease } from '../../runtime/informers/shared-informers.js'
import { WorkQueue } from '../../runtime/queue/work-queue.js'
import { watchQueueStall } from '../../runtime/queue/queue-stall-watch.js'
import type { QueueStallOptions } from '../../runtime/queue/queue-stall-watch.js'
import { HookRecovery } from './hook-recovery.js'
import type { ParentShard } from '../sharding/parent-shard.js'
import { ShardGuard } from '../sharding/shard-guard.js'
import type { WorkQueueMetrics } from '../../runtime/queue/work-queue-metrics.js'
import { objectKey } from '../../core/object-key.js'
import { isSyncResultOnlyUpdate, recordingSyncRequest } from './sync-request-recorder.js'
import { composeSync } from './sync-chain.js'
import type { SyncStep } from './sync-chain.js'
import type { SyncResultWriter } from './sync-request-recorder.js'

/** A watched collection: a resource and an optional scope. */
export interface WatchSource {
  readonly ref: ResourceRef
  readonly scope?: ListWatchScope
  /**
   * Cached for syncs to read, but its events enqueue nothing: for objects only the engine
   * writes (ControllerRevisions), whose changes are not news to it.
   */
  readonly passive?: boolean
}

/** The caches a kind reads during a sync, by role and index. */
export interface ControllerCaches {
  readonly parents: readonly Informer[]
  readonly children: readonly Informer[]
}

/** What a kind is given when its controller starts. */
export interface ControllerKindRuntime {
  /** Enqueues parent keys, e.g. for events of informers the kind acquires itself. */
  enqueue(keys: readonly string[]): void
  /** The caches every sync of this run receives. */
  readonly caches: ControllerCaches
}

/** The per-kind strategy of a hosted controller. */
export interface ControllerKind {
  /** Queue and log name, e.g. `CompositeController-podservice-controller`. */
  readonly name: string
  readonly parentSources: readonly WatchSource[]
  readonly childSources: readonly WatchSource[]
  /** Resync period of every parent, when set. */
  readonly resyncPeriodMs: number | undefined
  /** Keys to enqueue for a parent event; `old` is set for updates. */
  parentKeys(object: KubeObject, old: KubeObject | undefined, caches: ControllerCaches): string[]
  /** Keys to enqueue for a child event. */
  childKeys(
    child: KubeObject,
    change: 'add' | 'update' | 'delete',
    old: KubeObject | undefined,
    caches: ControllerCaches
  ): string[]
  /** The cached parent a key names; undefined when it is not cached (deleted, or not watched). */
  parentOf?(key: string, caches: ControllerCaches): KubeObject | undefined
  /** Keys of every parent, for periodic resyncs. */
  allParentKeys(caches: ControllerCaches): string[]
  /** Syncs one parent. */
  sync(key: string, context: ReconcileContext, caches: ControllerCaches): Promise<Action>
  /** Starts what the kind runs besides the loop; called once the caches exist, before syncs. */
  start?(runtime: ControllerKindRuntime): void
  /** Releases what {@link ControllerKind.start} acquired; called after the last sync ended. */
  stop?(): Promise<void>
  /**
   * Undoes what the kind put on parents (its finalizers), because its controller object was
   * deleted; not called when the controller merely restarts.
   */
  release?(caches: ControllerCaches, signal: AbortSignal): Promise<void>
}

/** Options of {@link ParentController}. */
export interface ParentControllerOptions {
  readonly kind: ControllerKind
  readonly informers: SharedInformers
  /** Where server-side sharded collections come from (`shard.watches`); absent: none. */
  readonly shardedInformers?: SharedInformers
  /** Where children following their parents' shard buckets come from; absent: none. */
  readonly childInformers?: SharedInformers
  readonly workers?: number
  readonly queueMetrics?: WorkQueueMetrics
  readonly observer?: ControllerLoopObserver
  /** Workers start once this settles (leader election); caches are kept warm meanwhile. */
  readonly gate?: Promise<void>
  /** Reports keys that wait too long for a worker; absent: not watched. */
  readonly stallWatch?: QueueStallOptions
  /** This replica's share of the parents (sharding); absent: every parent. */
  readonly shard?: ParentShard
  /** Answers `metactl sync` requests; absent: requests are synced but not answered. */
  readonly syncResults?: SyncResultWriter
  /**
   * How long a cache may receive nothing before its first sync until {@link ParentController.start}
   * fails; absent: it waits for as long as it takes.
   */
  readonly cacheSyncStallMs?: number
}

/** Runs one hosted controller: caches, queue, workers, resync. */
export class ParentController {
  readonly #options: ParentControllerOptions
  readonly #queue: WorkQueue
  readonly #loop: ControllerLoop
  #leases: { parents: InformerLease[]; children: InformerLease[] } | undefined
  #unsubscribe: (() => void)[] = []
  #resyncTimer: NodeJS.Timeout | undefined
  #stopStallWatch: (() => void) | undefined
  #caches: ControllerCaches = { parents: [], children: [] }
  #kindStarted = false
  readonly #guard: ShardGuard | undefined

  constructor(options: ParentControllerOptions) {
    this.#options = options
    this.#queue = new WorkQueue({
      name: options.kind.name,
      ...(options.queueMetrics === undefined ? {} : { metrics: options.queueMetrics }),
    })
    const { kind, shard } = options
    this.#guard =
      shard === undefined
        ? undefined
        : new ShardGuard({
            shard,
            name: kind.name,
            parentOf: (key) => kind.parentOf?.(key, this.#caches),
            allKeys: () => kind.allParentKeys(this.#caches),
            enqueue: (keys, priority) => {
              for (const key of keys) this.#queue.add(key, { priority })
            },
          })
    const recovery = new HookRecovery((keys) => {
      this.#enqueue(keys)
    })
    this.#loop = new ControllerLoop({
      queue: this.#queue,
      // The way into a sync, outermost first; the kind's own steps follow in `kind.sync`.
      reconcile: composeSync([shardStep(this.#guard), this.#syncRequestStep()], (key, context) =>
        kind.sync(key, context, this.#caches)
      ),
      workers: options.workers ?? 5,
      observer: {
        onOutcome: (key, outcome, durationMs) => {
          recovery.onOutcome(key, outcome)
          options.observer?.onOutcome?.(key, outcome, durationMs)
        },
      },
      ...(options.gate === undefined ? {} : { gate: options.gate }),
    })
  }

  /** Answers a `metactl sync` request the cached parent carries; absent when nobody answers. */
  #syncRequestStep(): SyncStep | undefined {
    const { kind, syncResults: write } = this.#options
    if (write === undefined) return undefined
    return (key, _context, next) => {
      const parent = kind.parentOf?.(key, this.#caches)
      return recordingSyncRequest(parent, this.#parentRef(parent), write, next)
    }
  }

  /** The resource of a cached parent: the source whose cache holds that very object. */
  #parentRef(parent: KubeObject | undefined): ResourceRef | undefined {
    if (parent === undefined) return undefined
    const key = objectKey(parent)
    const index = this.#caches.parents.findIndex((informer) => informer.store.get(key) === parent)
    return this.#options.kind.parentSources[index]?.ref
  }

  /** The controller's name. */
  get name(): string {
    return this.#options.kind.name
  }

  /**
   * Acquires the informers, waits until all are synced, then starts the workers and the resync.
   * Rejects (after releasing everything) when `signal` aborts first, or with a
   * `CacheSyncStalledError` when a cache stalls (see {@link ParentControllerOptions.cacheSyncStallMs}).
   */
  async start(signal?: AbortSignal): Promise<void> {
    const { kind, informers, shardedInformers: sharded, childInformers, shard } = this.#options
    const parents = kind.parentSources.map((s) =>
      (sharded ?? informers).acquire(s.ref, s.scope ?? {})
    )
    // Passive sources (ControllerRevisions) carry no bucket label: they stay whole.
    const children = kind.childSources.map((s) =>
      (sharded !== undefined && shard?.watches?.shardsChildren(s.ref) === true
        ? sharded
        : childInformers !== undefined && s.passive !== true
          ? childInformers
          : informers
      ).acquire(s.ref, s.scope ?? {})
    )
    this.#leases = { parents, children }
    this.#caches = {
      parents: parents.map((l) => l.informer),
      children: children.map((l) => l.informer),
    }
    const enqueue = (keys: readonly string[]): void => {
      this.#enqueue(keys)
    }
    this.#kindStarted = true
    kind.start?.({ enqueue, caches: this.#caches })
    for (const lease of parents) {
      const handlers: InformerHandlers = {
        onAdd: (o) => {
          enqueue(kind.parentKeys(o, undefined, this.#caches))
        },
        onUpdate: (old, o) => {
          // The engine's own answer to a sync request is no news: it must not sync again.
          if (isSyncResultOnlyUpdate(old, o)) return
          enqueue(kind.parentKeys(o, old, this.#caches))
        },
        onDelete: (o) => {
          enqueue(kind.parentKeys(o, undefined, this.#caches))
        },
      }
      this.#unsubscribe.push(lease.informer.subscribe(handlers))
    }
    for (const [index, lease] of children.entries()) {
      if (kind.childSources[index]?.passive === true) continue
      const handlers: InformerHandlers = {
        onAdd: (o) => {
          enqueue(kind.childKeys(o, 'add', undefined, this.#caches))
        },
        onUpdate: (old, o) => {
          enqueue(kind.childKeys(o, 'update', old, this.#caches))
        },
        onDelete: (o) => {
          enqueue(kind.childKeys(o, 'delete', undefined, this.#caches))
        },
      }
      this.#unsubscribe.push(lease.informer.subscribe(handlers))
    }
    try {
      await this.#waitForCaches([...parents, ...children], signal)
    } catch (error) {
      await this.stop()
      throw error
    }
    this.#loop.start()
    this.#guard?.start()
    if (this.#options.stallWatch !== undefined)
      this.#stopStallWatch = watchQueueStall(this.#queue, this.#options.stallWatch)
    if (kind.resyncPeriodMs !== undefined) {
      const period = kind.resyncPeriodMs
      this.#resyncTimer = setInterval(() => {
        // Resyncs only re-check: the low lane keeps them from delaying fresh events.
        const keys = kind.allParentKeys(this.#caches)
        for (const key of this.#guard?.admit(keys) ?? keys)
          this.#queue.add(key, { priority: 'low' })
      }, period)
      this.#resyncTimer.unref()
    }
  }

  /** Waits for the first sync of every cache, failing when one stalls (`cacheSyncStallMs`). */
  #waitForCaches(leases: readonly InformerLease[], signal: AbortSignal | undefined): Promise<void> {
    return waitForSyncProgress(
      leases.map((l) => l.informer),
      {
        stallMs: this.#options.cacheSyncStallMs ?? Infinity,
        ...(signal === undefined ? {} : { signal }),
      }
    )
  }

  /**
   * Stops the workers, then lets the kind undo what it put on parents (see
   * {@link ControllerKind.release}) while the caches are still held; {@link stop} follows.
   */
  async release(signal: AbortSignal): Promise<void> {
    // No sync may run meanwhile: a sync woken by a released parent would put a finalizer back.
    await this.#loop.stop()
    await this.#options.kind.release?.(this.#caches, signal)
  }

  /** Enqueues a key, e.g. for an in-process trigger. */
  enqueue(key: string): void {
    this.#enqueue([key])
  }

  /** Enqueues the keys this replica serves (all of them without sharding). */
  #enqueue(keys: readonly string[]): void {
    for (const key of this.#guard?.admit(keys) ?? keys) this.#queue.add(key)
  }

  /** Stops the workers (letting in-flight syncs finish), unsubscribes and releases the informers. */
  async stop(): Promise<void> {
    if (this.#resyncTimer !== undefined) clearInterval(this.#resyncTimer)
    this.#resyncTimer = undefined
    this.#stopStallWatch?.()
    this.#stopStallWatch = undefined
    this.#guard?.stop()
    for (const unsubscribe of this.#unsubscribe) unsubscribe()
    this.#unsubscribe = []
    await this.#loop.stop()
    if (this.#kindStarted) {
      this.#kindStarted = false
      await this.#options.kind.stop?.()
    }
    const leases = this.#leases
    this.#leases = undefined
    if (leases !== undefined) {
      await Promise.all([...leases.parents, ...leases.children].map((l) => l.release()))
    }
  }
}

/** Skips a parent outside this replica's shard (see {@link ShardGuard.run}); absent unsharded. */
function shardStep(guard: ShardGuard | undefined): SyncStep | undefined {
  return guard === undefined ? undefined : (key, _context, next) => guard.run(key, next)
}
