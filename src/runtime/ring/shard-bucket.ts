/**
 * Shard buckets: a coarse, label-sized form of the shard hash. A child is labelled with its
 * parent's bucket, so a replica can select the children of its parents with a plain label
 * selector (`<label> in (…)`), which every API server honours, gate or not.
 *
 * @module
 */
import { fnv1a64 } from './fnv1a64.js'
import type { HashRange } from './hash-ring.js'

/**
 * Bits of the 64-bit hash a bucket keeps: its top 12, i.e. 4,096 buckets. A ring range rarely
 * starts or ends on a bucket boundary, so a replica selects every bucket its ranges touch and
 * shares each boundary bucket with a neighbour: with 64 virtual nodes per member, each of three
 * replicas touches about 45 boundary buckets, 1 % of the children beyond its share (4 % with
 * 1,024 buckets, 17 % with 256), for a selector of about 1,400 values (10 KB in a query string).
 */
export const SHARD_BUCKET_BITS = 12

/** The number of buckets: `2^SHARD_BUCKET_BITS`. */
export const SHARD_BUCKETS: number = 2 ** SHARD_BUCKET_BITS

const SHIFT = BigInt(64 - SHARD_BUCKET_BITS)

/** The bucket of a 64-bit hash: its top {@link SHARD_BUCKET_BITS} bits. */
export function bucketOfHash(hash: bigint): number {
  return Number(hash >> SHIFT)
}

/** The bucket of a value (a parent's uid): the bucket of its FNV-1a hash, as the ring hashes it. */
export function shardBucketOf(value: string): number {
  return bucketOfHash(fnv1a64(value))
}

/** The buckets that `ranges` touch, sorted and without repeats. */
export function bucketsTouching(ranges: readonly HashRange[]): number[] {
  const buckets = new Set<number>()
  for (const range of ranges) {
    if (range.start >= range.end) continue
    const last = bucketOfHash(range.end - 1n)
    for (let b = bucketOfHash(range.start); b <= last; b++) buckets.add(b)
  }
  return [...buckets].sort((a, b) => a - b)
}

/** The label selector of `buckets` under `label`; undefined for none (a selector cannot say "nothing"). */
export function bucketSelector(label: string, buckets: readonly number[]): string | undefined {
  if (buckets.length === 0) return undefined
  return `${label} in (${buckets.join(',')})`
}
