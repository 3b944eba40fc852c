import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { HashRing } from '../../runtime/ring/hash-ring.js'
import { ChildListings } from './child-listings.js'
import { ShardSelection } from './shard-selection.js'

describe('ChildListings', () => {
  it('holds syncs back from a ring change until every child list is made for it', async () => {
    const selection = new ShardSelection('uid')
    const listings = new ChildListings(selection, 60_000)
    const a = listings.register()
    const b = listings.register()
    selection.serve(new HashRing(['x', 'y']).rangesOf('x'))
    listings.listed(a, selection.generation)
    listings.listed(b, selection.generation)
    assert.equal(listings.whenCurrent(), undefined)
    selection.serve(new HashRing(['x']).rangesOf('x'))
    const waiting = listings.whenCurrent()
    assert.ok(waiting !== undefined)
    let done = false
    void waiting.then(() => (done = true))
    listings.listed(a, selection.generation)
    await Promise.resolve()
    assert.equal(done, false)
    listings.listed(b, selection.generation)
    await waiting
    assert.equal(listings.whenCurrent(), undefined)
  })

  it('stops waiting for a list that never comes, and forgets it', async () => {
    const selection = new ShardSelection('uid')
    const listings = new ChildListings(selection, 10)
    listings.register()
    selection.serve(new HashRing(['x']).rangesOf('x'))
    await listings.whenCurrent()
    assert.equal(listings.whenCurrent(), undefined)
  })
})
