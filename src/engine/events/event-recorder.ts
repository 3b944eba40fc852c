/**
 * Records Kubernetes Events about objects, as upstream Metacontroller does through client-go's
 * recorder: component `metacontroller`, repeated events aggregated into a count, and a
 * per-object spam filter.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import type { KubeObject } from '../../core/kube-object.js'
import type { DynamicClient } from '../../kube/dynamic-client.js'
import type { Clock } from '../../runtime/clock/clock.js'
import { systemClock } from '../../runtime/clock/clock.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import { silentLogger } from '../../runtime/diagnostics/logger.js'
import { TokenBucket } from '../../runtime/rate-limit/token-bucket.js'
import { EVENTS } from '../../kube/well-known-resources.js'

/** Event type. */
export type EventType = 'Normal' | 'Warning'

/** Receives events about objects; implementations never throw. */
export interface EventSink {
  record(object: KubeObject, type: EventType, reason: string, message: string): void
}

/** Options of {@link EventRecorder}. */
export interface EventRecorderOptions {
  /** `source.component` of every event (`metacontroller`). */
  readonly component?: string
  /** Events per object allowed in a burst (25, upstream `--events-burst`). */
  readonly burst?: number
  /** Refill rate per object (1/300 per second, upstream `--events-qps`). */
  readonly qps?: number
  readonly clock?: Clock
  readonly log?: Logger
  /** Events are dropped while this returns false (a standby replica writes nothing). */
  readonly enabled?: () => boolean
}

interface Aggregate {
  readonly name: string
  readonly namespace: string
  count: number
}

/** Writes core/v1 Events, aggregating repeats of the same reason and message per object. */
export class EventRecorder implements EventSink {
  readonly #client: DynamicClient
  readonly #component: string
  readonly #burst: number
  readonly #qps: number
  readonly #clock: Clock
  readonly #log: Logger
  readonly #enabled: () => boolean
  readonly #buckets = new Map<string, TokenBucket>()
  readonly #aggregates = new Map<string, Aggregate>()
  #pending: Promise<void> = Promise.resolve()

  constructor(client: DynamicClient, options: EventRecorderOptions = {}) {
    this.#client = client
    this.#component = options.component ?? 'metacontroller'
    this.#burst = options.burst ?? 25
    this.#qps = options.qps ?? 1 / 300
    this.#clock = options.clock ?? systemClock
    this.#log = options.log ?? silentLogger
    this.#enabled = options.enabled ?? ((): boolean => true)
  }

  record(object: KubeObject, type: EventType, reason: string, message: string): void {
    if (!this.#enabled()) return
    const uid =
      object.metadata.uid ??
      `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`
    let bucket = this.#buckets.get(uid)
    if (bucket === undefined) {
      bucket = new TokenBucket({ qps: this.#qps, burst: this.#burst, clock: this.#clock })
      this.#buckets.set(uid, bucket)
      // Bounded like client-go's correlator cache, so short-lived objects cannot grow it forever.
      if (this.#buckets.size > 4096) {
        const oldest = this.#buckets.keys().next().value
        if (oldest !== undefined) this.#buckets.delete(oldest)
      }
    }
    if (!bucket.tryTake()) {
      this.#log.debug('event dropped by the spam filter', { reason, message })
      return
    }
    // Writes are chained so aggregation sees its own previous write.
    this.#pending = this.#pending.then(() => this.#write(object, uid, type, reason, message))
  }

  /** Resolves when every recorded event has been written (or has failed and been logged). */
  flush(): Promise<void> {
    return this.#pending
  }

  async #write(
    object: KubeObject,
    uid: string,
    type: EventType,
    reason: string,
    message: string
  ): Promise<void> {
    // Events about cluster-scoped objects go to `default`, as client-go puts them.
    const ns = object.metadata.namespace
    const namespace = ns === undefined || ns === '' ? 'default' : ns
    const now = new Date(this.#clock.now()).toISOString()
    const key = `${uid}\u0000${type}\u0000${reason}\u0000${message}`
    const aggregate = this.#aggregates.get(key)
    try {
      if (aggregate !== undefined) {
        aggregate.count++
        await this.#client.patch(
          EVENTS,
          aggregate.name,
          { count: aggregate.count, lastTimestamp: now },
          { namespace: aggregate.namespace, type: 'merge' }
        )
        return
      }
      const name = `${object.metadata.name ?? 'object'}.${randomBytes(8).toString('hex')}`
      await this.#client.create(EVENTS, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: {
          apiVersion: object.apiVersion,
          kind: object.kind,
          name: object.metadata.name,
          namespace: object.metadata.namespace,
          uid: object.metadata.uid,
          resourceVersion: object.metadata.resourceVersion,
        },
        type,
        reason,
        message,
        source: { component: this.#component },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        reportingComponent: this.#component,
      })
      this.#aggregates.set(key, { name, namespace, count: 1 })
      if (this.#aggregates.size > 4096) {
        const oldest = this.#aggregates.keys().next().value
        if (oldest !== undefined) this.#aggregates.delete(oldest)
      }
    } catch (error) {
      this.#aggregates.delete(key)
      this.#log.warn('cannot record event', { reason, message, error })
    }
  }
}
