import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { HASH_SPACE_END, HashRing } from './hash-ring.js'
import { RingOwnership } from './ring-ownership.js'

const SAMPLES = Array.from({ length: 400 }, (_, i) => (HASH_SPACE_END / 400n) * BigInt(i) + 777n)

function ownedBy(ring: HashRing, member: string): bigint[] {
  return SAMPLES.filter((h) => ring.ownerOf(h) === member)
}

describe('RingOwnership', () => {
  it('gains every hash it owns on its first ring, and after clear', () => {
    const ring = new HashRing(['a', 'b'])
    const ownership = new RingOwnership('a')
    const first = ownership.serve(ring)
    assert.deepEqual(SAMPLES.filter(first), ownedBy(ring, 'a'))
    ownership.clear()
    const again = ownership.serve(ring)
    assert.deepEqual(SAMPLES.filter(again), ownedBy(ring, 'a'))
  })

  it('gains only what the new ring adds to what it owned all along', () => {
    const abc = new HashRing(['a', 'b', 'c'])
    const ab = new HashRing(['a', 'b'])
    const ownership = new RingOwnership('a')
    ownership.serve(abc)
    ownership.narrow(ab)
    const gained = ownership.serve(ab)
    const expected = ownedBy(ab, 'a').filter((h) => abc.ownerOf(h) !== 'a')
    assert.ok(expected.length > 20)
    assert.deepEqual(SAMPLES.filter(gained), expected)
  })

  it('counts as gained what a view took away in between, even when the ring is the same again', () => {
    const ab = new HashRing(['a', 'b'])
    const abd = new HashRing(['a', 'b', 'd'])
    const ownership = new RingOwnership('a')
    ownership.serve(ab)
    // d appeared, a stopped serving what d would get, then d was gone before any agreement.
    ownership.narrow(abd)
    ownership.narrow(ab)
    const gained = ownership.serve(ab)
    const givenToD = ownedBy(ab, 'a').filter((h) => abd.ownerOf(h) === 'd')
    assert.ok(givenToD.length > 10)
    assert.deepEqual(SAMPLES.filter(gained), givenToD)
  })
})
