import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { fnv1a64, hex16, shardHash } from './fnv1a64.js'

describe('fnv1a64', () => {
  it('matches the published FNV-1a 64-bit test vectors', () => {
    // From the FNV reference test suite (Fowler, Noll, Vo).
    assert.equal(fnv1a64(''), 0xcbf29ce484222325n)
    assert.equal(fnv1a64('a'), 0xaf63dc4c8601ec8cn)
    assert.equal(fnv1a64('foobar'), 0x85944171f73967e8n)
  })

  it('hashes the UTF-8 bytes of the value, as Go hashes []byte(s)', () => {
    // 'é' is two UTF-8 bytes; hashing UTF-16 code units would give another value.
    const bytes = [0xc3, 0xa9]
    let expected = 0xcbf29ce484222325n
    for (const byte of bytes)
      expected = ((expected ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn
    assert.equal(fnv1a64('é'), expected)
  })

  it('formats hashes as 16 lower-case hex digits, zero-padded', () => {
    assert.equal(hex16(0n), '0000000000000000')
    assert.equal(hex16(0xabcn), '0000000000000abc')
    assert.equal(shardHash('a'), 'af63dc4c8601ec8c')
    assert.match(shardHash('0b1f2c6e-2f7a-4d8e-9b1c-3f5e6a7b8c9d'), /^[0-9a-f]{16}$/)
  })

  it('equals the plain 64-bit arithmetic on random ASCII and non-ASCII values', () => {
    const reference = (value: string): bigint => {
      let hash = 0xcbf29ce484222325n
      for (const byte of new TextEncoder().encode(value))
        hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn
      return hash
    }
    const alphabet = 'abcdefXYZ0123456789-/.\u00e9\u4e2d\u{1f600}\u007f\u0000'
    for (let i = 0; i < 2000; i++) {
      const chars = Array.from(alphabet)
      const value = Array.from(
        { length: i % 50 },
        (_, k) => chars[(i * 31 + k * 17) % chars.length]
      ).join('')
      assert.equal(fnv1a64(value), reference(value), JSON.stringify(value))
    }
    assert.equal(fnv1a64(crypto.randomUUID()) < 2n ** 64n, true)
  })
})
