/**
 * Sharding for the engine: a {@link RingMembership} on its own connection, turned into the
 * {@link ParentShard} hosted controllers filter their parents with and the
 * {@link EngineLeadership} write guard (no write once this replica's Lease is not renewed).
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { ClusterConfig } from '../../kube/cluster-config.js'
import type { DynamicClient } from '../../kube/dynamic-client.js'
import { Informer } from '../../runtime/informers/informer.js'
import { LEASE_RESOURCE } from '../../runtime/leader/leader-election.js'
import { describeCollection, dynamicListWatcher } from '../../runtime/informers/list-watcher.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import type { HashRing } from '../../runtime/ring/hash-ring.js'
import { RING_LABEL } from '../../runtime/ring/member-lease.js'
import { RingMembership } from '../../runtime/ring/ring-membership.js'
import type { ShardField } from '../../runtime/ring/shard-selector.js'
import { shardHashOf } from '../../runtime/ring/shard-selector.js'
import { startLeaseHolder } from '../leadership/engine-leadership.js'
import type { EngineLeadership, EngineLeaseHolder } from '../leadership/engine-leadership.js'
import type { ParentShard, ShardedWatches, ShardParticipant } from './parent-shard.js'
import { ShardSelection } from './shard-selection.js'
import { ChildListings } from './child-listings.js'

import { countReceivedBytes } from './count-received-bytes.js'
import { shardedListWatcher } from './sharded-list-watcher.js'
import { bucketedChildWatcher, SHARD_BUCKET_LABEL } from './bucketed-child-watcher.js'
import { bucketOfHash } from '../../runtime/ring/shard-bucket.js'
import { waitForNoLiveHolder } from './writer-handover.js'
import type { ShardMetrics } from './shard-metrics.js'

/**
 * The longest a sync waits for the child lists of a new ring: they take well under a second
 * each; a collection whose informer was released never lists again and must not block syncs.
 */
const CHILD_LIST_WAIT_MS = 10_000

/** Options of {@link startEngineSharding}. */
export interface EngineShardingOptions {
  readonly namespace: string
  /** The ring's name (its Leases' label value and name prefix). */
  readonly ring: string
  /** What a parent's shard hash is taken of. */
  readonly field: ShardField
  readonly leaseDurationMs: number
  readonly renewDeadlineMs: number
  readonly retryPeriodMs: number
  readonly identity?: string
  readonly log: Logger
  /** Where the sharding metrics go; none when absent. */
  readonly metrics?: ShardMetrics
  /**
   * Ask the API server for this replica's parents only (`shardSelector`, feature gate
   * `ShardedListAndWatch`), falling back to client-side filtering where it is ignored
   * (default true).
   */
  readonly serverSideWatches?: boolean
  /**
   * The leader-election Lease of the same controllers: this replica joins the ring only once it
   * has no live holder, so moving from leader election to a ring never has two writers.
   */
  readonly afterLeaderLease?: { readonly namespace: string; readonly name: string }
}

/** A running ring membership. */
export interface EngineSharding extends EngineLeaseHolder {
  /** Pass to the engine as `shard`. */
  readonly shard: ParentShard
  /** Pass to the engine as `leadership`: the write guard, and workers wait for the first ring. */
  readonly leadership: EngineLeadership
  readonly membership: RingMembership
  /** Resolves with the reason once this replica could not renew its Lease in time. */
  readonly lost: Promise<string>
  /** Stops serving, drains in-flight syncs and leaves the ring, so others take over at once. */
  release(): Promise<void>
}

/** Joins the ring, on a connection of its own (see `startLeaseHolder`); returns at once. */
export function startEngineSharding(
  config: ClusterConfig,
  options: EngineShardingOptions
): EngineSharding {
  const connection = {
    userAgent: 'metacontroller-ts/sharding',
    retryPeriodMs: options.retryPeriodMs,
    what: 'ring membership',
  }
  return startLeaseHolder(config, connection, ({ client, lead, leading }) => {
    const participants = new Set<ShardParticipant>()
    const selection = new ShardSelection(options.field)
    const listings = new ChildListings(selection, CHILD_LIST_WAIT_MS)
    const membership = new RingMembership({
      client,
      namespace: options.namespace,
      ring: options.ring,
      ...(options.identity === undefined ? {} : { identity: options.identity }),
      leaseDurationMs: options.leaseDurationMs,
      renewDeadlineMs: options.renewDeadlineMs,
      retryPeriodMs: options.retryPeriodMs,
      log: options.log,
      drain: async () => {
        await Promise.all([...participants].map((p) => p.drain()))
      },
      onView: (view) => {
        countHandoff(membership, view, participants, options.field)
      },
      onServe: (ring, gained) => {
        lead()
        options.metrics?.served(ring.members.length, membership.handoffs === 0)
        selection.serve(ring.rangesOf(membership.identity))
        // Only the gained parents: events of those owned all along were enqueued as they came.
        const gainedParent = (parent: KubeObject): boolean =>
          gained(shardHashOf(options.field, parent.metadata))
        for (const p of participants) p.resync(gainedParent)
      },
    })
    const informer = watchRing(client, options.namespace, options.ring, (leases) => {
      membership.observeLeases(leases)
    })
    return {
      shard: {
        ...parentShard(membership, participants, options),
        ...(options.field === 'uid' ? { childrenListed: () => listings.whenCurrent() } : {}),
        watches: countedWatches(shardedWatches(selection, listings, options), options.metrics),
      },
      leadership: { leading, canWrite: () => membership.canWrite() },
      identity: membership.identity,
      membership,
      run: (signal: AbortSignal) =>
        afterLeader(client, options, signal).then(() =>
          signal.aborted ? 'stopped' : membership.run(signal)
        ),
      letGo: async () => {
        await informer.stop()
        await membership.release()
      },
    }
  })
}

/** Has every parent loop count its cached parents whose owner differs between `view` and the served ring. */
function countHandoff(
  membership: RingMembership,
  view: HashRing,
  participants: ReadonlySet<ShardParticipant>,
  field: ShardField
): void {
  const self = membership.identity
  const served = membership.ring
  const moves = (parent: KubeObject): boolean => {
    const hash = shardHashOf(field, parent.metadata)
    return (served?.ownerOf(hash) === self) !== (view.ownerOf(hash) === self)
  }
  for (const p of participants) p.handoff(moves)
}

/** Resolves once the leader-election Lease (if named) has no live holder; see writer-handover. */
async function afterLeader(
  client: DynamicClient,
  { afterLeaderLease: lease, retryPeriodMs, log }: EngineShardingOptions,
  signal: AbortSignal
): Promise<void> {
  if (lease === undefined) return
  let said = false
  await waitForNoLiveHolder({
    read: async (readSignal) => {
      const leases = await client.list(LEASE_RESOURCE, {
        namespace: lease.namespace,
        fieldSelector: `metadata.name=${lease.name}`,
        signal: readSignal,
      })
      return leases.items
    },
    retryPeriodMs,
    signal,
    onError: (error) => {
      log.warn('cannot read the leader-election Lease; not joining the ring until it can', {
        lease: `${lease.namespace}/${lease.name}`,
        error,
        hint: 'the ring needs get/list on Leases in the leader-election namespace too',
      })
    },
    onWait: (holders) => {
      if (said) return
      said = true
      log.info('waiting for the leader-election Lease to be released before joining the ring', {
        lease: `${lease.namespace}/${lease.name}`,
        holders,
      })
    },
  })
}

/** The parent loops' view of the ring: which parents this replica owns, and who drains. */
function parentShard(
  membership: RingMembership,
  participants: Set<ShardParticipant>,
  { field, metrics }: EngineShardingOptions
): EngineSharding['shard'] {
  return {
    owns: (parent) => membership.owns(shardHashOf(field, parent.metadata)),
    register: (participant) => {
      participants.add(participant)
      return () => participants.delete(participant)
    },
    ...(metrics === undefined
      ? {}
      : {
          dropped: (controller: string, count: number) => {
            metrics.dropped(controller, count)
          },
          owned: (controller: string, count: number) => {
            metrics.owned(controller, count)
          },
          waiting: (controller: string, count: number) => {
            metrics.waiting(controller, count)
          },
        }),
  }
}

/**
 * The sharded informers' list-watchers: with the selection's shard selector when server-side,
 * logging and counting each fallback once; whole otherwise. Both count what they receive.
 */
function shardedWatches(
  selection: ShardSelection,
  listings: ChildListings,
  { field, log, metrics, serverSideWatches }: EngineShardingOptions
): ShardedWatches {
  return {
    listWatchers: (client) => (ref, scope) =>
      shardedListWatcher({
        source: (shardSelector) =>
          dynamicListWatcher(
            client,
            ref,
            shardSelector === undefined ? scope : { ...scope, shardSelector }
          ),
        selection,
        serverSide: serverSideWatches ?? true,
        onReceived: (collection, count) => {
          metrics?.received(collection, count)
        },
        onHeld: (collection, count) => {
          metrics?.held(collection, count)
        },
        onFallback: (collection, object) => {
          log.warn(
            'the API server ignored the shard selector; filtering this collection on the client ' +
              '(turn on the ShardedListAndWatch feature gate of the API server to cache less)',
            {
              collection,
              outside: `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`,
            }
          )
          metrics?.fellBack(collection)
        },
      }),
    shardsChildren: (ref) => field === 'namespace' && ref.namespaced,
    ...(field === 'uid' ? childrenByBucket(selection, listings, metrics) : {}),
  }
}

/**
 * Under the uid key, children follow their parents through the shard-bucket label: each child
 * written carries its parent's bucket, and children are watched by this replica's buckets (and
 * unlabelled). Plain label selectors: no feature gate needed.
 */
function childrenByBucket(
  selection: ShardSelection,
  listings: ChildListings,
  metrics: ShardMetrics | undefined
): Pick<ShardedWatches, 'childListWatchers' | 'childLabels'> {
  return {
    childListWatchers: (client) => (ref, scope) =>
      bucketedChildWatcher({
        source: (labelSelector) =>
          dynamicListWatcher(client, ref, {
            ...scope,
            labelSelector:
              scope.labelSelector === undefined
                ? labelSelector
                : `${scope.labelSelector},${labelSelector}`,
          }),
        selection,
        listings,
        collection: describeCollection(ref, scope),
        onReceived: (collection, count) => {
          metrics?.received(collection, count)
        },
        onHeld: (collection, count) => {
          metrics?.held(collection, count)
        },
      }),
    childLabels: (parent) => ({
      [SHARD_BUCKET_LABEL]: String(bucketOfHash(shardHashOf('uid', parent.metadata))),
    }),
  }
}

/** `watches`, counting the bytes each collection receives into `metrics` when there are any. */
function countedWatches(
  watches: ShardedWatches,
  metrics: ShardMetrics | undefined
): ShardedWatches {
  if (metrics === undefined) return watches
  return countReceivedBytes(watches, (collection, bytes) => {
    metrics.receivedBytes(collection, bytes)
  })
}

/** Watches the ring's Leases and hands the whole set over on every change. */
function watchRing(
  client: DynamicClient,
  namespace: string,
  ring: string,
  onChange: (leases: readonly KubeObject[]) => void
): Informer {
  const informer = new Informer(
    dynamicListWatcher(client, LEASE_RESOURCE, {
      namespace,
      labelSelector: `${RING_LABEL}=${ring}`,
    })
  )
  const changed = (): void => {
    onChange(informer.store.list())
  }
  informer.subscribe({ onAdd: changed, onUpdate: changed, onDelete: changed })
  informer.start()
  return informer
}
