/**
 * Metrics of sharding: the ring served, handoffs, and per hosted controller the parents this
 * replica owns and the parent keys it dropped because another replica owns them.
 *
 * @module
 */
import { Counter, Gauge } from '../../runtime/prom-client-core.js'
import type { Registry } from '../../runtime/prom-client-core.js'

/** Sharding metrics on one registry. */
export class ShardMetrics {
  readonly #members: Gauge
  readonly #handoffs: Counter
  readonly #owned: Gauge<'controller'>
  readonly #dropped: Counter<'controller'>

  constructor(registry: Registry) {
    const registers = [registry]
    this.#members = new Gauge({
      name: 'metacontroller_shard_ring_members',
      help: 'Members of the ring this replica serves (0 before the first agreement)',
      registers,
    })
    this.#handoffs = new Counter({
      name: 'metacontroller_shard_handoffs_total',
      help: 'Rings this replica started serving after its first: each one moved parents',
      registers,
    })
    this.#owned = new Gauge({
      name: 'metacontroller_shard_owned_parents',
      help: 'Parents of a hosted controller this replica owned at the last ring change',
      labelNames: ['controller'],
      registers,
    })
    this.#dropped = new Counter({
      name: 'metacontroller_shard_parents_dropped_total',
      help: 'Parent keys not enqueued or not synced because another replica owns the parent (or a handoff is under way)',
      labelNames: ['controller'],
      registers,
    })
  }

  /** A ring was agreed; `first` when it is this replica's first. */
  served(members: number, first: boolean): void {
    this.#members.set(members)
    if (!first) this.#handoffs.inc()
  }

  /** The parents a controller owns, counted at a ring change. */
  owned(controller: string, count: number): void {
    this.#owned.set({ controller }, count)
  }

  /** Parent keys a controller dropped. */
  dropped(controller: string, count: number): void {
    this.#dropped.inc({ controller }, count)
  }
}
