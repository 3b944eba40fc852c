/**
 * What a hosted controller's parent loop needs from sharding: whether this replica serves a
 * parent now, and a way to be drained and resynced when ownership changes.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'

/** A running parent loop, as sharding drives it. */
export interface ShardParticipant {
  /** Resolves once no sync of a parent this replica no longer owns runs. */
  drain(): Promise<void>
  /** Enqueues every owned parent (ownership grew: events of those parents were dropped). */
  resync(): void
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
}
