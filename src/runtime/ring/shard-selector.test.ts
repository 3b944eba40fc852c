import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { fnv1a64 } from './fnv1a64.js'
import { HASH_SPACE_END, HashRing } from './hash-ring.js'
import { objectInRanges, shardBound, shardHashOf, shardSelector } from './shard-selector.js'

describe('shardSelector', () => {
  it('writes 16-digit hex bounds, and 2^64 as the one 17-digit bound', () => {
    assert.equal(shardBound(0n), '0x0000000000000000')
    assert.equal(shardBound(0x8000000000000000n), '0x8000000000000000')
    assert.equal(shardBound(HASH_SPACE_END), '0x10000000000000000')
    assert.throws(() => shardBound(HASH_SPACE_END + 1n), RangeError)
  })

  it('joins one shardRange per range with ||, on the field asked for', () => {
    assert.equal(
      shardSelector('uid', [
        { start: 0n, end: 0x10n },
        { start: 0x8000000000000000n, end: HASH_SPACE_END },
      ]),
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000010') || " +
        "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
    )
    assert.equal(
      shardSelector('namespace', [{ start: 0n, end: HASH_SPACE_END }]),
      "shardRange(object.metadata.namespace, '0x0000000000000000', '0x10000000000000000')"
    )
    assert.equal(shardSelector('uid', []), undefined)
  })

  it('selects exactly the objects the ring gives the member', () => {
    const ring = new HashRing(['a', 'b', 'c'])
    for (let i = 0; i < 2000; i++) {
      const metadata = { uid: `uid-${i}`, namespace: `ns-${i % 37}` }
      for (const m of ring.members) {
        assert.equal(
          objectInRanges('uid', metadata, ring.rangesOf(m)),
          ring.ownerOf(fnv1a64(metadata.uid)) === m
        )
        assert.equal(
          objectInRanges('namespace', metadata, ring.rangesOf(m)),
          ring.ownerOf(fnv1a64(metadata.namespace)) === m
        )
      }
    }
  })

  it('hashes an object’s field as fnv1a64 of its value, per field, for every version', () => {
    const v1 = { uid: 'a1b2', namespace: 'team-a' }
    assert.equal(shardHashOf('uid', v1), fnv1a64('a1b2'))
    assert.equal(shardHashOf('namespace', v1), fnv1a64('team-a'))
    assert.equal(shardHashOf('uid', v1), fnv1a64('a1b2'), 'asked again')
    assert.equal(shardHashOf('namespace', {}), fnv1a64(''), 'cluster-scoped')
    assert.equal(shardHashOf('uid', { ...v1, uid: 'c3d4' }), fnv1a64('c3d4'), 'a new version')
  })
})
