/**
 * Turns hash ranges into the API server's shard selector (`shardSelector` list and watch option,
 * KEP-5866): one `shardRange(field, 'start', 'end')` per range, joined with `||`.
 *
 * @module
 */
import { hex16 } from './fnv1a64.js'
import { fnv1a64 } from './fnv1a64.js'
import type { HashRange } from './hash-ring.js'
import { HASH_SPACE_END } from './hash-ring.js'

/** Which object field the shard hash is taken of. */
export type ShardField = 'uid' | 'namespace'

/** The CEL path of a {@link ShardField}, as the API server accepts it. */
export function shardFieldPath(field: ShardField): string {
  return field === 'uid' ? 'object.metadata.uid' : 'object.metadata.namespace'
}

/**
 * A bound as the API server requires it: `0x` and exactly 16 hex digits, or
 * `0x10000000000000000` for 2^64 (the server refuses `'0x0'`).
 */
export function shardBound(value: bigint): string {
  if (value < 0n || value > HASH_SPACE_END) throw new RangeError(`bound out of range: ${value}`)
  return value === HASH_SPACE_END ? '0x10000000000000000' : `0x${hex16(value)}`
}

/**
 * The shard selector matching `ranges` of `field`; undefined for no range (nothing to select:
 * a selector cannot say "nothing", so the caller decides).
 */
export function shardSelector(field: ShardField, ranges: readonly HashRange[]): string | undefined {
  if (ranges.length === 0) return undefined
  const path = shardFieldPath(field)
  return ranges
    .map((r) => `shardRange(${path}, '${shardBound(r.start)}', '${shardBound(r.end)}')`)
    .join(' || ')
}

/** The value of `field` in an object's metadata, `''` when absent (cluster-scoped namespace). */
export function shardValue(
  field: ShardField,
  metadata: { readonly uid?: string; readonly namespace?: string }
): string {
  return (field === 'uid' ? metadata.uid : metadata.namespace) ?? ''
}

/** Hashes already taken, per metadata object (a new version of an object is hashed anew). */
const hashes: Record<ShardField, WeakMap<object, bigint>> = {
  uid: new WeakMap(),
  namespace: new WeakMap(),
}

/**
 * The shard hash of an object's `field` ({@link fnv1a64} of {@link shardValue}). Remembered per
 * metadata object: a sharded replica asks for the same parent's hash on each of its events and
 * its children's, and the hash costs microseconds where V8 does not optimize.
 */
export function shardHashOf(
  field: ShardField,
  metadata: { readonly uid?: string; readonly namespace?: string }
): bigint {
  const known = hashes[field].get(metadata)
  if (known !== undefined) return known
  const hash = fnv1a64(shardValue(field, metadata))
  hashes[field].set(metadata, hash)
  return hash
}

/** Tells whether `hash` falls in one of `ranges`. */
export function inRanges(hash: bigint, ranges: readonly HashRange[]): boolean {
  return ranges.some((r) => hash >= r.start && hash < r.end)
}

/** Tells whether the object's `field` hashes into one of `ranges`. */
export function objectInRanges(
  field: ShardField,
  metadata: { readonly uid?: string; readonly namespace?: string },
  ranges: readonly HashRange[]
): boolean {
  return inRanges(shardHashOf(field, metadata), ranges)
}
