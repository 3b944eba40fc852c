/**
 * A consistent-hash ring over the 64-bit FNV-1a space, with virtual nodes: each member owns the
 * hashes from each of its points up to the next point of any member, so a member joining or
 * leaving moves about 1/N of the keys and every other key keeps its owner.
 *
 * @module
 */
import { fnv1a64 } from './fnv1a64.js'

/** 2^64: the exclusive upper bound of the hash space. */
export const HASH_SPACE_END: bigint = 1n << 64n

/** Virtual nodes per member: enough for an even spread (±~15 % per member), few enough ranges. */
export const DEFAULT_VIRTUAL_NODES = 64

/** A half-open range of hashes, `[start, end)`, with `0 <= start < end <= 2^64`. */
export interface HashRange {
  readonly start: bigint
  readonly end: bigint
}

/**
 * Where a member's `index`-th virtual node sits. FNV-1a of names that differ only in their last
 * characters differ only in their low bits, which would bunch a member's points together; the
 * MurmurHash3 finaliser spreads them. (Keys keep the API server's plain FNV-1a.)
 */
function pointOf(member: string, index: number): bigint {
  let h = fnv1a64(`${member}#${index}`)
  h = ((h ^ (h >> 33n)) * 0xff51afd7ed558ccdn) & MASK64
  h = ((h ^ (h >> 33n)) * 0xc4ceb9fe1a85ec53n) & MASK64
  return h ^ (h >> 33n)
}

const MASK64 = HASH_SPACE_END - 1n

interface Point {
  readonly position: bigint
  readonly member: string
}

/** An immutable ring of members; build a new one when membership changes. */
export class HashRing {
  /** The members, sorted. */
  readonly members: readonly string[]
  readonly #points: readonly Point[]

  /**
   * @param members - Member identities; duplicates count once.
   * @param virtualNodes - Points per member ({@link DEFAULT_VIRTUAL_NODES}).
   * @throws RangeError when `virtualNodes` is not a positive integer.
   */
  constructor(members: Iterable<string>, virtualNodes: number = DEFAULT_VIRTUAL_NODES) {
    if (!Number.isInteger(virtualNodes) || virtualNodes < 1)
      throw new RangeError(`virtual nodes must be a positive integer, got ${virtualNodes}`)
    this.members = [...new Set(members)].sort()
    const points: Point[] = []
    for (const member of this.members) {
      for (let i = 0; i < virtualNodes; i++) points.push({ position: pointOf(member, i), member })
    }
    // Ties (vanishingly rare) go to the smaller identity, so every replica builds the same ring.
    points.sort((a, b) =>
      a.position < b.position
        ? -1
        : a.position > b.position
          ? 1
          : a.member < b.member
            ? -1
            : a.member > b.member
              ? 1
              : 0
    )
    this.#points = points
  }

  /** Tells whether the ring has no member. */
  get empty(): boolean {
    return this.#points.length === 0
  }

  /** The member owning `hash`; undefined for an empty ring. */
  ownerOf(hash: bigint): string | undefined {
    const points = this.#points
    if (points.length === 0) return undefined
    // The last point at or below the hash owns it; below the first point wraps to the last.
    let low = 0
    let high = points.length - 1
    let found = -1
    while (low <= high) {
      const mid = (low + high) >> 1
      if ((points[mid]?.position ?? HASH_SPACE_END) <= hash) {
        found = mid
        low = mid + 1
      } else high = mid - 1
    }
    return points[found === -1 ? points.length - 1 : found]?.member
  }

  /** The member owning the FNV-1a hash of `value`; undefined for an empty ring. */
  ownerOfValue(value: string): string | undefined {
    return this.ownerOf(fnv1a64(value))
  }

  /** The ranges `member` owns, sorted and merged; empty when it is not a member. */
  rangesOf(member: string): HashRange[] {
    const points = this.#points
    const ranges: HashRange[] = []
    const add = (start: bigint, end: bigint): void => {
      if (start >= end) return
      const last = ranges.at(-1)
      if (last?.end === start) ranges[ranges.length - 1] = { start: last.start, end }
      else ranges.push({ start, end })
    }
    const first = points[0]
    const lastPoint = points.at(-1)
    if (first === undefined || lastPoint === undefined) return ranges
    // The wrapped range below the first point belongs to the last point's member.
    if (lastPoint.member === member) add(0n, first.position)
    for (const [i, point] of points.entries()) {
      if (point.member !== member) continue
      add(point.position, points[i + 1]?.position ?? HASH_SPACE_END)
    }
    return ranges
  }
}
