/**
 * Leader election on a `coordination.k8s.io/v1` Lease, with client-go's algorithm and defaults
 * (lease 15 s, renew deadline 10 s, retry period 2 s).
 *
 * @remarks
 * **Guarantees**
 * - A candidate takes the Lease only when it is free, released (empty holder) or not renewed for
 *   `leaseDurationSeconds` as measured on the candidate's own clock since it last saw the record
 *   change (so clocks of different machines are never compared).
 * - A leader that has not renewed successfully for `renewDeadlineMs` (shorter than the lease)
 *   gives up: `onStoppedLeading` runs before any other candidate may take the Lease. A leader that
 *   finds another holder in the Lease (it was stolen or deleted and re-taken) gives up at once.
 * - `release()` empties the holder, so a successor takes over at its next retry instead of waiting
 *   for the lease to expire.
 *
 * @module
 */
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { KubeObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import { ConflictError, NotFoundError, AlreadyExistsError } from '../../kube/api-error.js'
import type { DynamicClient, ResourceRef } from '../../kube/dynamic-client.js'
import type { Logger } from '../diagnostics/logger.js'
import { silentLogger } from '../diagnostics/logger.js'
import { abortableSleep } from '../clock/abortable-sleep.js'
import { isAborted } from '../clock/is-aborted.js'
import { LEADER_ELECTION_DEFAULTS } from './leader-election-defaults.js'

export { NotLeaderError } from './not-leader-error.js'
export { LEADER_ELECTION_DEFAULTS } from './leader-election-defaults.js'

/** The Lease resource. */
export const LEASE_RESOURCE: ResourceRef = {
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  namespaced: true,
}

/** The calls leader election makes: a {@link DynamicClient} or a test double. */
export type LeaseClient = Pick<DynamicClient, 'get' | 'create' | 'update'>

/** Options of {@link LeaderElector}. */
export interface LeaderElectorOptions {
  readonly client: LeaseClient
  readonly namespace: string
  /** The Lease name (upstream `--leader-election-id`, `metacontroller`). */
  readonly name: string
  /** This candidate's identity ({@link defaultIdentity}). */
  readonly identity?: string
  readonly leaseDurationMs?: number
  readonly renewDeadlineMs?: number
  readonly retryPeriodMs?: number
  readonly log?: Logger
  /** Called once when this candidate becomes the leader. */
  readonly onStartedLeading?: () => void
  /** Called once when a leader stops leading (lost, or released); never for a mere candidate. */
  readonly onStoppedLeading?: (reason: string) => void
  /** Called when the observed holder changes (including to this candidate). */
  readonly onNewLeader?: (identity: string) => void
}

/** `hostname_uuid`, as controller-runtime builds leader-election identities. */
export function defaultIdentity(): string {
  return `${hostname()}_${randomUUID()}`
}

/** The `spec` of a Lease as leader election reads and writes it. */
export interface LeaseRecord {
  readonly holderIdentity: string
  readonly leaseDurationSeconds: number
  readonly acquireTime?: string
  readonly renewTime?: string
  readonly leaseTransitions: number
}

/** Formats a time as a Kubernetes MicroTime (RFC 3339 with microseconds). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')
}

/** Reads the leader-election fields of a Lease; missing ones read as free. */
export function leaseRecord(lease: KubeObject): LeaseRecord {
  const spec = isJsonObject(lease['spec']) ? lease['spec'] : {}
  const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
  const acquireTime = text(spec['acquireTime'])
  const renewTime = text(spec['renewTime'])
  return {
    holderIdentity: text(spec['holderIdentity']) ?? '',
    leaseDurationSeconds:
      typeof spec['leaseDurationSeconds'] === 'number' ? spec['leaseDurationSeconds'] : 0,
    ...(acquireTime === undefined ? {} : { acquireTime }),
    ...(renewTime === undefined ? {} : { renewTime }),
    leaseTransitions: typeof spec['leaseTransitions'] === 'number' ? spec['leaseTransitions'] : 0,
  }
}

/** Runs leader election for one candidate. */
export class LeaderElector {
  readonly identity: string
  readonly #options: LeaderElectorOptions
  readonly #leaseMs: number
  readonly #renewDeadlineMs: number
  readonly #retryMs: number
  readonly #log: Logger
  #leading = false
  #observed: { record: LeaseRecord; resourceVersion: string; at: number } | undefined
  #lastHolder = ''
  /** Ends the current wait between acquire attempts early; see {@link LeaderElector.nudge}. */
  #wake: (() => void) | undefined

  /** @throws RangeError unless lease duration > renew deadline > retry period > 0. */
  constructor(options: LeaderElectorOptions) {
    this.#options = options
    this.identity = options.identity ?? defaultIdentity()
    this.#leaseMs = options.leaseDurationMs ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs
    this.#renewDeadlineMs = options.renewDeadlineMs ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs
    this.#retryMs = options.retryPeriodMs ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs
    this.#log = options.log ?? silentLogger
    checkDurations(this.#leaseMs, this.#renewDeadlineMs, this.#retryMs)
  }

  /**
   * Makes a waiting candidate try again now, e.g. because a watch saw the Lease released, so a
   * successor does not sit out the rest of its retry period.
   */
  nudge(): void {
    this.#wake?.()
  }

  /** Tells whether this candidate leads now. */
  isLeader(): boolean {
    return this.#leading
  }

  /** `namespace/name` of the Lease. */
  get lease(): string {
    return `${this.#options.namespace}/${this.#options.name}`
  }

  /**
   * Tries to acquire the Lease every retry period until it leads, then renews it until it cannot
   * (resolves with the reason) or `signal` aborts (resolves with `'stopped'`; the Lease is kept:
   * call {@link LeaderElector.release}).
   */
  async run(signal: AbortSignal): Promise<string> {
    this.#log.info('Attempting to acquire leader lease', { lease: this.lease })
    let acquiredAt = Date.now()
    while (!signal.aborted) {
      acquiredAt = Date.now()
      try {
        if (await this.#tryAcquireOrRenew(signal)) break
      } catch (error) {
        if (isAborted(signal)) break
        this.#log.warn('cannot acquire the leader lease; retrying', { lease: this.lease, error })
      }
      const wake = new AbortController()
      this.#wake = () => {
        wake.abort()
      }
      await abortableSleep(jittered(this.#retryMs), AbortSignal.any([signal, wake.signal]))
      this.#wake = undefined
    }
    if (isAborted(signal)) return 'stopped'
    this.#leading = true
    this.#log.info('Successfully acquired lease', { lease: this.lease, identity: this.identity })
    this.#options.onStartedLeading?.()
    const reason = await this.#renewLoop(signal, acquiredAt)
    if (reason !== 'stopped') this.#stopLeading(reason)
    return reason
  }

  /** Renews every retry period; returns why it stopped. */
  async #renewLoop(signal: AbortSignal, acquiredAt: number): Promise<string> {
    let lastRenew = acquiredAt
    while (!signal.aborted) {
      await abortableSleep(this.#retryMs, signal)
      if (isAborted(signal)) break
      // The deadline counts from when the last successful renewal was *sent*, so the lease a
      // successor computes from it always outlives this leader's writes.
      const attemptStarted = Date.now()
      const remaining = lastRenew + this.#renewDeadlineMs - attemptStarted
      if (remaining <= 0) return `failed to renew the lease within ${this.#renewDeadlineMs} ms`
      const attempt = AbortSignal.any([signal, AbortSignal.timeout(remaining)])
      let renewed = false
      try {
        renewed = await this.#tryAcquireOrRenew(attempt, true)
      } catch (error) {
        // A deleted Lease may be re-created by any candidate at once: leading on would risk two
        // writers.
        if (error instanceof NotFoundError) return 'the lease was deleted'
        this.#log.warn('cannot renew the leader lease', { lease: this.lease, error })
      }
      if (renewed) lastRenew = attemptStarted
      else if (this.#lastHolder !== this.identity)
        return `the lease is now held by ${this.#lastHolder === '' ? 'nobody' : this.#lastHolder}`
      if (Date.now() - lastRenew >= this.#renewDeadlineMs)
        return `failed to renew the lease within ${this.#renewDeadlineMs} ms`
    }
    return 'stopped'
  }

  #stopLeading(reason: string): void {
    if (!this.#leading) return
    this.#leading = false
    this.#log.error('leader election lost', { lease: this.lease, reason })
    this.#options.onStoppedLeading?.(reason)
  }

  /** Gives the Lease up (empty holder, 1 s duration), so a successor need not wait for expiry. */
  async release(): Promise<void> {
    if (!this.#leading) return
    this.#leading = false
    const observed = this.#observed
    if (observed === undefined) return
    const signal = AbortSignal.timeout(this.#retryMs * 2)
    try {
      await this.#writeRelease(observed.record.leaseTransitions, observed.resourceVersion, signal)
      this.#log.info('released the leader lease', { lease: this.lease })
    } catch (error) {
      this.#log.warn('cannot release the leader lease', { lease: this.lease, error })
    }
    this.#options.onStoppedLeading?.('released')
  }

  /**
   * Writes the empty holder over `resourceVersion`. A renewal aborted by the stop may still have
   * landed on the server (only its answer was lost), so a conflict is read again: while the
   * Lease still names this candidate, the release is written over the version read now.
   */
  async #writeRelease(
    leaseTransitions: number,
    resourceVersion: string,
    signal: AbortSignal
  ): Promise<void> {
    const now = microTime(Date.now())
    const released: LeaseRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaseTransitions,
    }
    try {
      await this.#write(released, resourceVersion, signal)
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error
      const { client, namespace, name } = this.#options
      const current = await client.get(LEASE_RESOURCE, name, { namespace, signal })
      const record = leaseRecord(current)
      if (record.holderIdentity !== this.identity) throw error
      const fresh = { ...released, leaseTransitions: record.leaseTransitions }
      await this.#write(fresh, current.metadata.resourceVersion ?? '', signal)
    }
  }

  /** One round of client-go's `tryAcquireOrRenew`; false when another holder's lease is valid. */
  async #tryAcquireOrRenew(signal: AbortSignal, renewing = false): Promise<boolean> {
    const { client, namespace, name } = this.#options
    const now = Date.now()
    let lease: KubeObject
    try {
      lease = await client.get(LEASE_RESOURCE, name, { namespace, signal })
    } catch (error) {
      if (renewing || !(error instanceof NotFoundError)) throw error
      return this.#create(now, signal)
    }
    const record = leaseRecord(lease)
    const resourceVersion = lease.metadata.resourceVersion ?? ''
    if (this.#observed === undefined || this.#observed.resourceVersion !== resourceVersion)
      this.#observed = { record, resourceVersion, at: now }
    this.#noteHolder(record.holderIdentity)
    const ours = record.holderIdentity === this.identity
    // A leader that finds another holder (stolen, or released by hand) must not take it back.
    if (renewing && !ours) return false
    const expiresAt = this.#observed.at + record.leaseDurationSeconds * 1000
    if (!ours && record.holderIdentity !== '' && expiresAt > now) return false
    const next: LeaseRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.#leaseMs / 1000),
      acquireTime: ours && record.acquireTime !== undefined ? record.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: ours ? record.leaseTransitions : record.leaseTransitions + 1,
    }
    try {
      await this.#write(next, resourceVersion, signal)
    } catch (error) {
      if (error instanceof ConflictError) return false
      throw error
    }
    return true
  }

  async #create(now: number, signal: AbortSignal): Promise<boolean> {
    const record: LeaseRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.#leaseMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    }
    try {
      const created = await this.#options.client.create(
        LEASE_RESOURCE,
        {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.#options.name, namespace: this.#options.namespace },
          spec: { ...record },
        },
        { signal }
      )
      this.#observed = { record, resourceVersion: created.metadata.resourceVersion ?? '', at: now }
      this.#noteHolder(this.identity)
      return true
    } catch (error) {
      if (error instanceof AlreadyExistsError) return false
      throw error
    }
  }

  async #write(record: LeaseRecord, resourceVersion: string, signal: AbortSignal): Promise<void> {
    const { client, namespace, name } = this.#options
    const updated = await client.update(
      LEASE_RESOURCE,
      {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace, resourceVersion },
        spec: { ...record },
      },
      { signal }
    )
    this.#observed = {
      record,
      resourceVersion: updated.metadata.resourceVersion ?? '',
      at: Date.now(),
    }
    this.#noteHolder(record.holderIdentity)
  }

  #noteHolder(holder: string): void {
    if (holder === this.#lastHolder) return
    this.#lastHolder = holder
    if (holder !== '') {
      this.#log.info('new leader elected', { lease: this.lease, leader: holder })
      this.#options.onNewLeader?.(holder)
    }
  }
}

function checkDurations(leaseMs: number, renewMs: number, retryMs: number): void {
  if (!(retryMs > 0 && renewMs > retryMs && leaseMs > renewMs)) {
    throw new RangeError(
      'leader election needs lease duration > renew deadline > retry period > 0, got ' +
        `${leaseMs} ms, ${renewMs} ms and ${retryMs} ms`
    )
  }
}

/** client-go's `wait.Jitter(retryPeriod, 1.2)`: up to 120 % on top. */
function jittered(ms: number): number {
  return ms * (1 + 1.2 * Math.random())
}
