/**
 * 64-bit FNV-1a, the hash the API server's `shardRange(...)` selectors use (KEP-5866): the
 * UTF-8 bytes of the field value, hashed with FNV-1a, compared as a 16-digit lower-case hex
 * number.
 *
 * @module
 */

// The offset basis 0xcbf29ce484222325 and the prime 0x100000001b3 = 2^40 + 0x1b3, in 32-bit halves.
const OFFSET_HI = 0xcbf29ce4
const OFFSET_LO = 0x84222325
const PRIME_LO = 0x1b3

const encoder = new TextEncoder()

/** The 64-bit FNV-1a hash of `value`'s UTF-8 bytes, as an unsigned bigint below 2^64. */
export function fnv1a64(value: string): bigint {
  // In two 32-bit halves: a bigint multiply per byte cost about 5 µs for a UID, and every event
  // of a sharded replica hashes its parent's UID (100,000 parents: half a second of a busy loop).
  let hi = OFFSET_HI
  let lo = OFFSET_LO
  const ascii = !/[\u0080-\uffff]/.test(value)
  const bytes = ascii ? undefined : encoder.encode(value)
  const length = bytes === undefined ? value.length : bytes.length
  for (let i = 0; i < length; i++) {
    lo ^= bytes === undefined ? value.charCodeAt(i) : (bytes[i] ?? 0)
    // hash * (2^40 + 0x1b3) mod 2^64: the low half times 0x1b3 carries into the high half, and
    // the low half shifted by 40 lands in the high half shifted by 8.
    const low = (lo >>> 0) * PRIME_LO
    hi = (Math.imul(hi, PRIME_LO) + Math.floor(low / 0x100000000) + (lo << 8)) | 0
    lo = low | 0
  }
  return (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0)
}

/** Formats a hash or bound below 2^64 as the API server does: 16 lower-case hex digits. */
export function hex16(value: bigint): string {
  return value.toString(16).padStart(16, '0')
}

/** The API server's shard hash of a field value: `fnv1a64` as 16 lower-case hex digits. */
export function shardHash(value: string): string {
  return hex16(fnv1a64(value))
}
