import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { fnv1a64 } from './fnv1a64.js'
import { HASH_SPACE_END, HashRing } from './hash-ring.js'
import {
  bucketOfHash,
  bucketSelector,
  bucketsTouching,
  SHARD_BUCKETS,
  shardBucketOf,
} from './shard-bucket.js'
import { inRanges } from './shard-selector.js'

const uids = Array.from(
  { length: 3000 },
  (_, i) =>
    `6f1c${i.toString(16).padStart(4, '0')}-8a2b-4c3d-9e4f-${(i * 7919).toString(16).padStart(12, '0')}`
)

describe('shard buckets', () => {
  it('puts the ends of the hash space in the first and last bucket', () => {
    assert.equal(bucketOfHash(0n), 0)
    assert.equal(bucketOfHash(HASH_SPACE_END - 1n), SHARD_BUCKETS - 1)
  })

  it('gives a value the bucket of its FNV-1a hash', () => {
    for (const uid of uids.slice(0, 50))
      assert.equal(shardBucketOf(uid), bucketOfHash(fnv1a64(uid)))
  })

  it('selects, for every member of a ring, the bucket of each uid it owns', () => {
    const ring = new HashRing(['a', 'b', 'c'])
    for (const member of ring.members) {
      const ranges = ring.rangesOf(member)
      const touched = new Set(bucketsTouching(ranges))
      for (const uid of uids) {
        if (inRanges(fnv1a64(uid), ranges)) assert.ok(touched.has(shardBucketOf(uid)), uid)
      }
    }
  })

  it('costs each of three members at most 2 % of the children beyond its share of the hashes', () => {
    const ring = new HashRing(['metactl-0', 'metactl-1', 'metactl-2'])
    const all = new Set<number>()
    for (const member of ring.members) {
      const ranges = ring.rangesOf(member)
      const share = Number(ranges.reduce((sum, r) => sum + r.end - r.start, 0n) >> 44n) / 2 ** 20
      const touched = bucketsTouching(ranges)
      for (const b of touched) all.add(b)
      assert.ok(
        touched.length / SHARD_BUCKETS <= share + 0.02,
        `${member}: ${touched.length} for ${share}`
      )
    }
    assert.equal(all.size, SHARD_BUCKETS)
  })

  it('touches nothing for no range and the one bucket of a range inside it', () => {
    assert.deepEqual(bucketsTouching([]), [])
    assert.deepEqual(bucketsTouching([{ start: 5n, end: 6n }]), [0])
    assert.deepEqual(bucketsTouching([{ start: 0n, end: HASH_SPACE_END }]).length, SHARD_BUCKETS)
  })

  it('writes a set-based label selector, and none for no bucket', () => {
    assert.equal(bucketSelector('x/b', [1, 7]), 'x/b in (1,7)')
    assert.equal(bucketSelector('x/b', []), undefined)
  })
})
