import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { fnv1a64 } from './fnv1a64.js'
import { HASH_SPACE_END, HashRing } from './hash-ring.js'
import { inRanges } from './shard-selector.js'

/** A small seeded generator, so a failing case can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

function keys(count: number, seed: number): string[] {
  const next = random(seed)
  return Array.from({ length: count }, (_, i) => `ns-${Math.floor(next() * 1e9)}/parent-${i}`)
}

function owners(ring: HashRing, values: readonly string[]): string[] {
  return values.map((v) => ring.ownerOfValue(v) ?? '')
}

describe('HashRing', () => {
  it('has no owner when empty', () => {
    const ring = new HashRing([])
    assert.equal(ring.empty, true)
    assert.equal(ring.ownerOf(5n), undefined)
    assert.deepEqual(ring.rangesOf('a'), [])
  })

  it('gives a single member the whole hash space as one range', () => {
    const ring = new HashRing(['only'])
    assert.deepEqual(ring.rangesOf('only'), [{ start: 0n, end: HASH_SPACE_END }])
    assert.equal(ring.ownerOf(0n), 'only')
    assert.equal(ring.ownerOf(HASH_SPACE_END - 1n), 'only')
  })

  it('is the same ring whatever the order the members are given in', () => {
    const values = keys(500, 1)
    assert.deepEqual(
      owners(new HashRing(['c', 'a', 'b']), values),
      owners(new HashRing(['b', 'c', 'a', 'a']), values)
    )
  })

  it('partitions the hash space: the ranges of all members cover it once, and agree with ownerOf', () => {
    const next = random(7)
    for (let n = 1; n <= 6; n++) {
      const members = Array.from(
        { length: n },
        (_, i) => `replica-${i}-${Math.floor(next() * 1e6)}`
      )
      const ring = new HashRing(members)
      const all = members
        .flatMap((m) => ring.rangesOf(m))
        .sort((a, b) => (a.start < b.start ? -1 : 1))
      let at = 0n
      for (const range of all) {
        assert.equal(range.start, at, `a gap or an overlap at ${at} with ${n} members`)
        assert.ok(range.end > range.start)
        at = range.end
      }
      assert.equal(at, HASH_SPACE_END)
      for (let i = 0; i < 300; i++) {
        const hash = BigInt(Math.floor(next() * 2 ** 32)) * BigInt(Math.floor(next() * 2 ** 32))
        const owner = ring.ownerOf(hash)
        for (const m of members) assert.equal(inRanges(hash, ring.rangesOf(m)), m === owner)
      }
      // The boundaries themselves: each range's start belongs to its member, its end does not.
      for (const m of members)
        for (const r of ring.rangesOf(m)) {
          assert.equal(ring.ownerOf(r.start), m)
          if (r.end < HASH_SPACE_END) assert.notEqual(ring.ownerOf(r.end), m)
        }
    }
  })

  it('moves about 1/(N+1) of the keys on a join, all of them to the new member', () => {
    const values = keys(20_000, 3)
    for (let n = 1; n <= 5; n++) {
      const before = Array.from({ length: n }, (_, i) => `engine-${i}`)
      const old = owners(new HashRing(before), values)
      const now = owners(new HashRing([...before, 'joiner']), values)
      let moved = 0
      for (const [i, owner] of now.entries()) {
        if (owner === old[i]) continue
        moved++
        assert.equal(owner, 'joiner', 'a key moved between two members that did not change')
      }
      const share = moved / values.length
      const ideal = 1 / (n + 1)
      assert.ok(
        Math.abs(share - ideal) < ideal * 0.4,
        `join at N=${n}: moved ${share}, ideal ${ideal}`
      )
    }
  })

  it('moves only the leaving member’s keys on a leave, about 1/N of them', () => {
    const values = keys(20_000, 5)
    for (let n = 2; n <= 6; n++) {
      const members = Array.from({ length: n }, (_, i) => `engine-${i}`)
      const old = owners(new HashRing(members), values)
      const now = owners(new HashRing(members.filter((m) => m !== 'engine-0')), values)
      let moved = 0
      for (const [i, owner] of now.entries()) {
        if (owner === old[i]) continue
        moved++
        assert.equal(old[i], 'engine-0', 'a key of a member that stayed moved')
      }
      const ideal = 1 / n
      assert.ok(Math.abs(moved / values.length - ideal) < ideal * 0.4, `leave at N=${n}`)
    }
  })

  it('spreads keys evenly: each of N members owns 1/N ± 40 %', () => {
    const values = keys(20_000, 9)
    for (let n = 2; n <= 6; n++) {
      const members = Array.from({ length: n }, (_, i) => `metacontroller-7d9f-${i}`)
      const counts = new Map<string, number>()
      for (const owner of owners(new HashRing(members), values))
        counts.set(owner, (counts.get(owner) ?? 0) + 1)
      for (const m of members) {
        const share = (counts.get(m) ?? 0) / values.length
        assert.ok(Math.abs(share - 1 / n) < 0.4 / n, `${m} owns ${share} of ${n}`)
      }
    }
  })

  it('refuses a virtual-node count that is not a positive integer', () => {
    assert.throws(() => new HashRing(['a'], 0), RangeError)
    assert.throws(() => new HashRing(['a'], 1.5), RangeError)
  })

  it('uses the FNV-1a hash of a value', () => {
    const ring = new HashRing(['a', 'b'])
    assert.equal(ring.ownerOfValue('x'), ring.ownerOf(fnv1a64('x')))
  })
})
