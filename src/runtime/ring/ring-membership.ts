/**
 * Ring membership on Leases: each replica announces itself with a Lease of its own, renewed like
 * the leader lease; the live members form a {@link HashRing}; a replica serves a hash only once
 * every live member has announced the same ring, and gives a hash up (drains its in-flight
 * syncs) before it announces a ring that moves the hash away.
 *
 * @remarks
 * **Handoff protocol** On a change of live members a replica (1) stops serving what the new ring
 * gives to others ({@link RingOwnership.narrow}), (2) waits for its in-flight syncs of those
 * hashes (`drain`), (3) writes the new ring's id into its Lease, and (4) starts serving the new
 * ring only when a fresh list of the Leases shows every live member announced that id. So the
 * receiver of a hash starts after the giver stopped: never two writers for one hash.
 *
 * **Failures** A member is dead when its Lease has not changed for the lease duration on the
 * observer's clock, confirmed by a fresh list. A member that cannot renew its own Lease within
 * the renew deadline (shorter than the lease duration) stops writing first: {@link canWrite}
 * turns false and {@link RingMembership.run} resolves with the reason. A member that left with
 * {@link RingMembership.release} deleted its Lease after draining, so its hashes move at once.
 *
 * **Timing** The loop runs a round every retry period, and also at once when the watched Leases
 * change what the protocol reads (a member joins, leaves or announces a ring; a plain renewal
 * does not, or every renewal would answer every other) and when the first live member's Lease
 * expires on this observer's clock, so a crashed member leaves the view one lease duration after
 * its last renewal was seen, not up to a retry period later.
 *
 * @module
 */
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { KubeObject } from '../../core/kube-object.js'
import { ConflictError, NotFoundError } from '../../kube/api-error.js'
import { LEADER_ELECTION_DEFAULTS, LEASE_RESOURCE, microTime } from '../leader/leader-election.js'
import type { Logger } from '../diagnostics/logger.js'
import { silentLogger } from '../diagnostics/logger.js'
import { HashRing } from './hash-ring.js'
import {
  memberLease,
  memberLeaseName,
  memberRecord,
  memberRecords,
  RING_LABEL,
  writeMemberLease,
} from './member-lease.js'
import type { RingClient } from './member-lease.js'
import { MemberTable, viewId } from './member-table.js'
import { RingOwnership } from './ring-ownership.js'
import { abortableSleep } from '../clock/abortable-sleep.js'
import { isAborted } from '../clock/is-aborted.js'
import type { Clock } from '../clock/clock.js'
import { systemClock } from '../clock/clock.js'

/** Options of {@link RingMembership}. */
export interface RingMembershipOptions {
  readonly client: RingClient
  readonly namespace: string
  /** The ring's name: the label value of its Leases and the prefix of their names. */
  readonly ring: string
  /** This member's identity (`hostname_uuid` by default). */
  readonly identity?: string
  readonly leaseDurationMs?: number
  readonly renewDeadlineMs?: number
  readonly retryPeriodMs?: number
  readonly virtualNodes?: number
  readonly log?: Logger
  /** Local clock, in ms (default: `clock`'s). */
  readonly now?: () => number
  /** Times the waits between rounds, and tells the time unless `now` is given (Node's timers). */
  readonly clock?: Clock
  /** Resolves once no sync of a hash this member no longer {@link RingMembership.owns} runs. */
  readonly drain: () => Promise<void>
  /**
   * Called after ownership changed to a newly agreed ring, with the hashes this member gained:
   * those it did not own all the time since the previous ring (on the first ring: all it owns),
   * e.g. to enqueue the parents whose events it dropped.
   */
  readonly onServe?: (ring: HashRing, gained: (hash: bigint) => boolean) => void
  /**
   * Called when this member's view of the live members changed, before it drains and announces
   * it: `view` is the ring that will be agreed if every member sees the same (e.g. to count the
   * parents that move).
   */
  readonly onView?: (view: HashRing) => void
}

/** How long after a member's Lease expires the loop wakes to drop it: timers may fire early. */
const EXPIRY_MARGIN_MS = 50

/** One replica's membership of a ring. */
export class RingMembership {
  readonly identity: string
  readonly #options: RingMembershipOptions
  readonly #table = new MemberTable()
  readonly #ownership: RingOwnership
  readonly #leaseMs: number
  readonly #renewDeadlineMs: number
  readonly #retryMs: number
  readonly #now: () => number
  readonly #clock: Clock
  readonly #log: Logger
  #announced = ''
  #resourceVersion: string | undefined
  #lastRenewMs: number | undefined
  /** When this member's first renewal was sent: its first ring is agreed a retry period later. */
  #firstRenewMs: number | undefined
  #wake: (() => void) | undefined
  /** A change the protocol reads arrived since the current round started. */
  #nudged = false
  #handoffs = 0
  #releasing = false
  /** For {@link #lostReason}. */
  #lastRenewTookMs: number | undefined
  #maxWaitOverrunMs = 0

  /** @throws RangeError unless lease duration > renew deadline > retry period > 0. */
  constructor(options: RingMembershipOptions) {
    this.#options = options
    this.identity = options.identity ?? `${hostname()}_${randomUUID()}`
    this.#ownership = new RingOwnership(this.identity)
    this.#leaseMs = options.leaseDurationMs ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs
    this.#renewDeadlineMs = options.renewDeadlineMs ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs
    this.#retryMs = options.retryPeriodMs ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs
    this.#clock = options.clock ?? systemClock
    this.#now = options.now ?? (options.clock === undefined ? Date.now : () => this.#clock.now())
    this.#log = options.log ?? silentLogger
    if (!(this.#retryMs > 0 && this.#renewDeadlineMs > this.#retryMs))
      throw new RangeError('ring membership needs renew deadline > retry period > 0')
    if (!(this.#leaseMs > this.#renewDeadlineMs))
      throw new RangeError('ring membership needs lease duration > renew deadline')
  }

  /** `namespace/name` of this member's Lease. */
  get lease(): string {
    return `${this.#options.namespace}/${memberLeaseName(this.#options.ring, this.identity)}`
  }

  /** The ring served now (sorted members); empty before the first agreement. */
  get members(): readonly string[] {
    return this.#ownership.serving?.members ?? []
  }

  /** The ring served now; undefined before the first agreement. */
  get ring(): HashRing | undefined {
    return this.#ownership.serving
  }

  /** Rings served so far after the first: how often ownership was handed over. */
  get handoffs(): number {
    return this.#handoffs
  }

  /** Whether this member renewed its Lease within the renew deadline, so may write at all. */
  canWrite(): boolean {
    return (
      this.#lastRenewMs !== undefined && this.#now() - this.#lastRenewMs < this.#renewDeadlineMs
    )
  }

  /** Tells whether this member may serve `hash` now. */
  owns(hash: bigint): boolean {
    return this.canWrite() && this.#ownership.owns(hash)
  }

  /**
   * Records the ring's Leases as a watch cache holds them (all of them); wakes the loop when
   * that changes which members are live or what they announced.
   */
  observeLeases(leases: readonly KubeObject[]): void {
    const now = this.#now()
    const before = this.#table.protocolState(now, this.#leaseMs, this.identity)
    this.#table.observe(memberRecords(leases), now)
    if (this.#table.protocolState(now, this.#leaseMs, this.identity) !== before) this.nudge()
  }

  /**
   * Runs the next round at once: ends the current wait between rounds, or, while a round runs,
   * skips the wait after it (a change that arrives mid-round is not lost for a retry period).
   */
  nudge(): void {
    this.#nudged = true
    this.#wake?.()
  }

  /**
   * Renews the Lease and runs the handoff protocol every retry period until `signal` aborts
   * (resolves `'stopped'`; call {@link release}) or the Lease cannot be renewed within the renew
   * deadline (resolves with the reason; this member serves nothing from then on).
   */
  async run(signal: AbortSignal): Promise<string> {
    while (!signal.aborted) {
      try {
        await this.tick(signal)
      } catch (error) {
        if (isAborted(signal)) break
        this.#log.warn('ring membership round failed; retrying', { lease: this.lease, error })
      }
      if (this.#lastRenewMs !== undefined && !this.canWrite()) {
        this.#ownership.clear()
        return this.#lostReason()
      }
      // A change that arrived during the round is read at once, not a retry period later.
      if (this.#nudged) continue
      const wake = new AbortController()
      this.#wake = () => {
        wake.abort()
      }
      const waitMs = this.#untilNextRound()
      const sleptFrom = this.#now()
      await abortableSleep(waitMs, AbortSignal.any([signal, wake.signal]), this.#clock)
      // A wait that ends late means this process did not run (blocked event loop, starved CPU).
      if (!isAborted(wake.signal) && !isAborted(signal)) {
        const overrunMs = this.#now() - sleptFrom - waitMs
        this.#maxWaitOverrunMs = Math.max(this.#maxWaitOverrunMs, overrunMs)
      }
      this.#wake = undefined
    }
    return 'stopped'
  }

  /** Why the membership ended: a late answer means a slow API server, late waits a busy process. */
  #lostReason(): string {
    const took = this.#lastRenewTookMs === undefined ? 'none' : `${this.#lastRenewTookMs} ms`
    const late = Math.round(this.#maxWaitOverrunMs)
    return `failed to renew the ring membership lease within ${this.#renewDeadlineMs} ms (last renewal answered in ${took}; waits between rounds ended up to ${late} ms late)`
  }

  /** The wait before the next round: a retry period, or less when a live member expires first. */
  #untilNextRound(): number {
    const now = this.#now()
    const expiry = this.#table.nextExpiry(now, this.#leaseMs, this.identity)
    // The round that may agree the first ring runs when its hold ends, not a retry after.
    const held = this.#holdsFirstRing(now) ? (this.#firstRenewMs ?? now) + this.#retryMs - now : 0
    const wait = held > 0 ? Math.min(this.#retryMs, held) : this.#retryMs
    if (expiry === undefined) return wait
    return Math.min(wait, expiry - now + EXPIRY_MARGIN_MS)
  }

  /** One round: renew the Lease, then advance the handoff protocol as far as it can go. */
  async tick(signal?: AbortSignal): Promise<void> {
    this.#nudged = false
    await this.#renew(signal)
    const live = this.#table.live(this.#now(), this.#leaseMs, this.identity)
    const id = viewId(live)
    if (id !== this.#announced) {
      const view = new HashRing(live, this.#options.virtualNodes)
      this.#ownership.narrow(view)
      this.#options.onView?.(view)
      await this.#options.drain()
      this.#announced = id
      await this.#renew(signal)
      this.#log.info('announced a ring', { lease: this.lease, members: live })
    }
    const serving = this.#ownership.serving
    if (serving !== undefined && viewId(serving.members) === id && !this.#hasStale()) return
    await this.#agree(id, signal)
  }

  /** Serves the announced ring when a fresh list shows every live member announced it. */
  async #agree(id: string, signal: AbortSignal | undefined): Promise<void> {
    const { client, namespace, ring } = this.#options
    const list = await client.list(LEASE_RESOURCE, {
      namespace,
      labelSelector: `${RING_LABEL}=${ring}`,
      ...(signal === undefined ? {} : { signal }),
    })
    const now = this.#now()
    this.#table.observe(memberRecords(list.items), now)
    await this.#cleanUp(list.items, now, signal)
    const live = this.#table.live(now, this.#leaseMs, this.identity)
    if (viewId(live) !== id) {
      // The fresh list changed the view (a member the watch had not shown yet, or one that
      // expired meanwhile): announce the new one at once.
      this.nudge()
      return
    }
    if (viewId(this.#ownership.serving?.members ?? []) === id) return
    const waiting = live.filter((m) => m !== this.identity && this.#table.announced(m) !== id)
    if (waiting.length > 0) {
      this.#log.debug('waiting for members to announce the ring', { waiting })
      return
    }
    if (this.#holdsFirstRing(now)) {
      this.#log.debug('waiting a retry period for members starting alongside', { members: live })
      return
    }
    const agreed = new HashRing(live, this.#options.virtualNodes)
    if (this.#ownership.serving !== undefined) this.#handoffs++
    const gained = this.#ownership.serve(agreed)
    this.#log.info('serving a ring', { lease: this.lease, members: live })
    this.#options.onServe?.(agreed, gained)
  }

  /**
   * Whether this member still holds back its first ring. Replicas started together write their
   * Leases within moments of each other, and one that agreed a ring of the members it saw first
   * would list and cache the ranges of a ring it leaves a round later (at 10,000 parents a
   * replica of three received half the collection that way); waiting one retry period after
   * its own first renewal lets the others' Leases appear. Only a member's first ring is held
   * (a joiner's too, which costs it up to a retry period); later changes of members wait for
   * every member's announcement anyway.
   */
  #holdsFirstRing(now: number): boolean {
    return this.#firstRenewMs === undefined || now - this.#firstRenewMs < this.#retryMs
  }

  /** Whether some member's Lease has not changed for long enough to be deleted. */
  #hasStale(): boolean {
    return this.#table.stale(this.#now(), this.#leaseMs * 4, this.identity).length > 0
  }

  /** Deletes the Leases of members that left, or died 4 lease durations ago. */
  async #cleanUp(
    leases: readonly KubeObject[],
    now: number,
    signal: AbortSignal | undefined
  ): Promise<void> {
    const { client, namespace } = this.#options
    const stale = new Set(this.#table.stale(now, this.#leaseMs * 4, this.identity))
    for (const lease of leases) {
      const record = memberRecord(lease)
      if (record === undefined || record.identity === this.identity) continue
      if (!record.released && !stale.has(record.identity)) continue
      try {
        await client.delete(LEASE_RESOURCE, memberLeaseName(this.#options.ring, record.identity), {
          namespace,
          // Only the version judged: a renewal in between keeps the Lease.
          preconditions: { resourceVersion: record.resourceVersion },
          ...(signal === undefined ? {} : { signal }),
        })
        this.#table.remove(record.identity)
      } catch (error) {
        this.#log.debug('cannot delete a member lease that left', {
          lease: lease.metadata.name,
          error,
        })
      }
    }
  }

  /**
   * Leaves the ring: serves nothing, waits for in-flight syncs, then marks the Lease released
   * (empty holder) so the other members take its hashes at once; they delete it.
   */
  async release(): Promise<void> {
    this.#ownership.clear()
    await this.#options.drain()
    if (this.#resourceVersion === undefined) return
    this.#releasing = true
    try {
      await this.#renew(AbortSignal.timeout(this.#retryMs * 2))
      this.#log.info('left the ring', { lease: this.lease })
    } catch (error) {
      this.#log.warn('cannot release the ring membership lease; it expires', {
        lease: this.lease,
        error,
      })
    }
    this.#resourceVersion = undefined
    this.#lastRenewMs = undefined
  }

  /** Writes this member's Lease (created on the first call) with the announced ring. */
  async #renew(signal: AbortSignal | undefined): Promise<void> {
    // Past the renew deadline the others may already have taken this member's hashes (a long
    // drain or slow requests inside one round): a late renewal must not let it serve them again.
    if (this.#lastRenewMs !== undefined && !this.canWrite() && !this.#releasing) {
      this.#ownership.clear()
      throw new Error(
        `the ring membership lease was not renewed within ${this.#renewDeadlineMs} ms`
      )
    }
    const { client, namespace, ring } = this.#options
    const sentAt = this.#now()
    const name = memberLeaseName(ring, this.identity)
    const lease = memberLease({
      name,
      namespace,
      ring,
      identity: this.identity,
      announced: this.#announced,
      released: this.#releasing,
      leaseDurationMs: this.#leaseMs,
      renewTime: microTime(sentAt),
    })
    let written: KubeObject
    try {
      written = await writeMemberLease(client, lease, this.#resourceVersion, signal)
    } catch (error) {
      // A write that landed without its answer leaves a stale version: read it again next time.
      if (error instanceof ConflictError || error instanceof NotFoundError)
        this.#resourceVersion = undefined
      throw error
    }
    this.#resourceVersion = written.metadata.resourceVersion
    this.#lastRenewTookMs = Math.round(this.#now() - sentAt)
    // Counted from when the write was sent, so a successor's expiry outlives this member's writes.
    this.#lastRenewMs = sentAt
    this.#firstRenewMs ??= sentAt
    this.#table.observe(memberRecords([written]), this.#now())
  }
}
