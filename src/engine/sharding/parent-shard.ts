/**
 * What a hosted controller's parent loop needs from sharding: whether this replica serves a
 * parent now, and a way to be drained and resynced when ownership changes.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { DynamicClient, ResourceRef } from '../../kube/dynamic-client.js'
import type { ListWatcherFactory } from '../../runtime/informers/shared-informers.js'

/** A running parent loop, as sharding drives it. */
export interface ShardParticipant {
  /** Resolves once no sync of a parent this replica no longer owns runs. */
  drain(): Promise<void>
  /**
   * Enqueues the cached parents this replica owns for which `gained` tells (ownership grew:
   * events of those parents were dropped), and reports how many it owns in all.
   */
  resync(gained: (parent: KubeObject) => boolean): void
  /** Counts the cached parents for which `moves` tells, and reports them as waiting. */
  handoff(moves: (parent: KubeObject) => boolean): void
}

/** This replica's share of the parents; see `startEngineSharding`. */
export interface ParentShard {
  /** Whether this replica serves `parent` now. */
  owns(parent: KubeObject): boolean
  /** Registers a running parent loop; returns its unregistration. */
  register(participant: ShardParticipant): () => void
  /** Counts parents dropped because another replica owns them (a metric). */
  dropped?(controller: string, count: number): void
  /** Reports how many parents a controller owns after a ring change (a metric). */
  owned?(controller: string, count: number): void
  /** Reports how many of a controller's parents wait for a handoff to end (a metric). */
  waiting?(controller: string, count: number): void
  /**
   * Undefined when the child caches hold what the served ring needs; else resolves once they
   * do (children followed by shard bucket relist after a ring change). Syncs wait for it.
   */
  childrenListed?(): Promise<void> | undefined
  /** Sharded informers of parents (and children hashed alike); absent: shared, whole ones. */
  readonly watches?: ShardedWatches
}

/**
 * Sharded informers: which collections are sharded, and how they are read (with the API
 * server's shard selector, or whole and filtered here).
 */
export interface ShardedWatches {
  /** The list-watchers of sharded collections over the engine's client. */
  listWatchers(client: DynamicClient): ListWatcherFactory
  /**
   * Whether a child collection is sharded as its parents are: only when a child hashes as its
   * parent, i.e. sharding by namespace and the child is namespaced (in its parent's namespace).
   */
  shardsChildren(ref: ResourceRef): boolean
  /**
   * The list-watchers of child collections that follow their parents through the shard-bucket
   * label (the uid key); absent when children are sharded as parents or watched whole.
   */
  readonly childListWatchers?: (client: DynamicClient) => ListWatcherFactory
  /** The labels the engine puts on each child of `parent` it writes; absent: none. */
  readonly childLabels?: (parent: KubeObject) => Readonly<Record<string, string>>
}
