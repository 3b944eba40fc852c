/**
 * Metrics of sharding: the ring served, handoffs, and per hosted controller the parents this
 * replica owns and the parent keys it dropped because another replica owns them.
 *
 * @module
 */
import { Counter, Gauge } from '../../runtime/metrics/prom-client-core.js'
import type { Registry } from '../../runtime/metrics/prom-client-core.js'

/** Sharding metrics on one registry. */
export class ShardMetrics {
  readonly #members: Gauge
  readonly #handoffs: Counter
  readonly #owned: Gauge<'controller'>
  readonly #dropped: Counter<'controller'>
  readonly #waiting: Gauge<'controller'>
  readonly #fallbacks: Counter<'resource'>
  readonly #received: Counter<'resource'>
  readonly #receivedBytes: Counter<'resource'>
  readonly #held: Gauge<'resource'>

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
    this.#waiting = new Gauge({
      name: 'metacontroller_shard_parents_waiting',
      help: 'Cached parents of a hosted controller whose owner changes in the ring this replica announced, until that ring is agreed (0 when no handoff is under way)',
      labelNames: ['controller'],
      registers,
    })
    this.#fallbacks = new Counter({
      name: 'metacontroller_shard_server_side_fallbacks_total',
      help: 'Collections whose API server ignored the shard selector (feature gate ShardedListAndWatch off, or an older server): filtered on the client instead',
      labelNames: ['resource'],
      registers,
    })
    this.#received = new Counter({
      name: 'metacontroller_shard_received_objects_total',
      help: 'Objects a sharded collection received from the API server: listed items and watch events (bookmarks aside)',
      labelNames: ['resource'],
      registers,
    })
    this.#receivedBytes = new Counter({
      name: 'metacontroller_shard_received_bytes_total',
      help: 'Bytes of the response bodies a sharded collection received from the API server: its lists and watch streams, bookmarks included',
      labelNames: ['resource'],
      registers,
    })
    this.#held = new Gauge({
      name: 'metacontroller_shard_cached_objects',
      help: 'Objects a sharded collection holds in its cache',
      labelNames: ['resource'],
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

  /** Parents of a controller waiting for a handoff to end. */
  waiting(controller: string, count: number): void {
    this.#waiting.set({ controller }, count)
  }

  /** A collection's server ignored the shard selector. */
  fellBack(resource: string): void {
    this.#fallbacks.inc({ resource })
  }

  /** Objects a sharded collection received. */
  received(resource: string, count: number): void {
    this.#received.inc({ resource }, count)
  }

  /** Response bytes a sharded collection received. */
  receivedBytes(resource: string, bytes: number): void {
    this.#receivedBytes.inc({ resource }, bytes)
  }

  /** Objects a sharded collection holds. */
  held(resource: string, count: number): void {
    this.#held.set({ resource }, count)
  }

  /** Parent keys a controller dropped. */
  dropped(controller: string, count: number): void {
    this.#dropped.inc({ controller }, count)
  }
}
