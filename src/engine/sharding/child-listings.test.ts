import assert from 'node:assert/strict'
import { describe, it, mock } from 'node:test'
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

  it('keeps waiting for a live list when the longest wait ends just after a new ring', async () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 })
    try {
      const selection = new ShardSelection('uid')
      const listings = new ChildListings(selection, 10_000, () => Date.now())
      const released = listings.register()
      const live = listings.register()
      selection.serve(new HashRing(['x', 'y', 'z']).rangesOf('x'))
      listings.listed(released, selection.generation)
      listings.listed(live, selection.generation)
      // A ring change; the informer of `released` is gone and never lists again.
      selection.serve(new HashRing(['x', 'y']).rangesOf('x'))
      listings.started(live)
      let done = false
      void listings.whenCurrent()?.then(() => (done = true))
      mock.timers.tick(1_000)
      listings.listed(live, selection.generation)
      // The next ring comes just before the first wait runs out; `live` begins its list.
      mock.timers.tick(8_500)
      selection.serve(new HashRing(['x']).rangesOf('x'))
      listings.started(live)
      mock.timers.tick(600)
      await Promise.resolve()
      assert.equal(done, false, 'a sync went ahead before the live list of the new ring')
      assert.equal(listings.current, false)
      assert.ok(listings.whenCurrent() !== undefined)
      listings.listed(live, selection.generation)
      await Promise.resolve()
      assert.equal(done, true)
      assert.equal(listings.whenCurrent(), undefined)
    } finally {
      mock.timers.reset()
    }
  })

  it('stops waiting for a list begun longer ago than the longest wait', async () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 })
    try {
      const selection = new ShardSelection('uid')
      const listings = new ChildListings(selection, 10_000, () => Date.now())
      const stuck = listings.register()
      selection.serve(new HashRing(['x']).rangesOf('x'))
      listings.started(stuck)
      let done = false
      void listings.whenCurrent()?.then(() => (done = true))
      mock.timers.tick(9_999)
      await Promise.resolve()
      assert.equal(done, false)
      mock.timers.tick(1)
      await Promise.resolve()
      assert.equal(done, true)
      assert.equal(listings.whenCurrent(), undefined)
    } finally {
      mock.timers.reset()
    }
  })
})
