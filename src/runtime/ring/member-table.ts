/**
 * The members of a ring as one replica sees them: each member's Lease, the view of the ring it
 * announced, and when this replica last saw the Lease change, on its own clock (so clocks of
 * different machines are never compared, as in leader election).
 *
 * @module
 */
import { shardHash } from './fnv1a64.js'

/** What a member's Lease says. */
export interface MemberRecord {
  readonly identity: string
  /** The view id ({@link viewId}) the member announced; `''` before its first announcement. */
  readonly view: string
  /** Changes with every renewal. */
  readonly resourceVersion: string
  /** The member left the ring on purpose (drained first): its hashes may move at once. */
  readonly released: boolean
}

interface Seen {
  record: MemberRecord
  /** Local time the record was first seen with this resourceVersion. */
  changedAt: number
}

/**
 * The id of a view: the hash of its sorted member identities. Two replicas with the same live
 * members compute the same id.
 */
export function viewId(members: Iterable<string>): string {
  return shardHash([...new Set(members)].sort().join('\n'))
}

/** Members, their announcements and their liveness. */
export class MemberTable {
  readonly #seen = new Map<string, Seen>()

  /**
   * Records Leases read at `now`. A released member is forgotten at once; a member whose Lease
   * vanished without a release (deleted by hand) stays until it expires, since it may still be
   * writing.
   */
  observe(records: readonly MemberRecord[], now: number): void {
    for (const record of records) {
      if (record.released) {
        this.#seen.delete(record.identity)
        continue
      }
      const seen = this.#seen.get(record.identity)
      if (seen?.record.resourceVersion !== record.resourceVersion)
        this.#seen.set(record.identity, { record, changedAt: now })
      else seen.record = record
    }
  }

  /** Forgets a member, e.g. on its Lease's delete event. */
  remove(identity: string): void {
    this.#seen.delete(identity)
  }

  /**
   * Members whose Lease changed less than `leaseDurationMs` ago; `self` is always live (its own
   * renewals are checked by its renew deadline instead).
   */
  live(now: number, leaseDurationMs: number, self: string): string[] {
    const live = new Set([self])
    for (const [identity, seen] of this.#seen)
      if (now - seen.changedAt < leaseDurationMs) live.add(identity)
    return [...live].sort()
  }

  /**
   * When the first of the members live at `now` (`self` aside) expires unless its Lease changes:
   * the earliest last change plus `leaseDurationMs`; undefined when no other member is live.
   */
  nextExpiry(now: number, leaseDurationMs: number, self: string): number | undefined {
    let first: number | undefined
    for (const [identity, seen] of this.#seen) {
      const expiry = seen.changedAt + leaseDurationMs
      if (identity === self || expiry <= now) continue
      if (first === undefined || expiry < first) first = expiry
    }
    return first
  }

  /**
   * What the handoff protocol reads at `now`: the live members and the view each announced
   * (`self` aside). A renewal alone leaves it as it is; a join, a release, an expiry or an
   * announcement changes it.
   */
  protocolState(now: number, leaseDurationMs: number, self: string): string {
    return this.live(now, leaseDurationMs, self)
      .filter((identity) => identity !== self)
      .map((identity) => `${identity}=${this.announced(identity) ?? ''}`)
      .join('\n')
  }

  /** Members whose Lease has not changed for `olderThanMs`: candidates for clean-up. */
  stale(now: number, olderThanMs: number, self: string): string[] {
    return [...this.#seen]
      .filter(([identity, seen]) => identity !== self && now - seen.changedAt >= olderThanMs)
      .map(([identity]) => identity)
  }

  /** The view a member announced; undefined when not seen. */
  announced(identity: string): string | undefined {
    return this.#seen.get(identity)?.record.view
  }
}
