import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Clock } from '../clock/clock.js'
import { FakeClock } from '../clock/fake-clock.js'
import { TokenBucket } from './token-bucket.js'
import { settle } from '../../../test/support/event-loop-turns.js'

describe('TokenBucket', () => {
  it('serves a full burst at once, then one token per 1/qps', () => {
    const clock = new FakeClock()
    const bucket = new TokenBucket({ qps: 10, burst: 3, clock })
    const waits = Array.from({ length: 6 }, () => bucket.reserve())
    assert.deepEqual(waits, [0, 0, 0, 100, 200, 300])
    assert.ok(Math.abs(bucket.available() + 3) < 1e-9, 'three tokens in debt')
  })

  it('repays its debt and refills continuously, up to the burst and no further', () => {
    const clock = new FakeClock()
    const bucket = new TokenBucket({ qps: 10, burst: 3, clock })
    for (let i = 0; i < 5; i++) bucket.reserve()
    clock.advance(200)
    assert.ok(Math.abs(bucket.available()) < 1e-9, 'debt repaid after 200 ms')
    clock.advance(150)
    assert.ok(Math.abs(bucket.available() - 1.5) < 1e-9, 'a token and a half after 150 ms more')
    clock.advance(60_000)
    assert.equal(bucket.available(), 3)
    assert.deepEqual([bucket.reserve(), bucket.reserve(), bucket.reserve()], [0, 0, 0])
    assert.equal(bucket.reserve(), 100)
  })

  it('rounds waits up to whole milliseconds for rates that do not divide 1000', () => {
    const clock = new FakeClock()
    const bucket = new TokenBucket({ qps: 3, burst: 1, clock })
    assert.deepEqual([bucket.reserve(), bucket.reserve(), bucket.reserve()], [0, 334, 667])
  })

  it('keeps 10 qps with burst 100, as client-go BucketRateLimiter, over a minute', () => {
    const clock = new FakeClock()
    const bucket = new TokenBucket({ qps: 10, burst: 100, clock })
    let granted = 0
    for (let ms = 0; ms <= 60_000; ms += 10) {
      while (bucket.tryTake()) granted++
      clock.advance(10)
    }
    assert.equal(granted, 100 + 600)
  })

  it('take resolves at once while tokens last and otherwise when the clock has paid the debt', async () => {
    const clock = new FakeClock()
    const bucket = new TokenBucket({ qps: 10, burst: 1, clock })
    await bucket.take()
    let resolved = false
    const waiting = bucket.take().then(() => {
      resolved = true
    })
    clock.advance(99)
    await settle()
    assert.equal(resolved, false)
    clock.advance(1)
    await waiting
    assert.equal(resolved, true)
  })

  it('take rejects with the abort reason and gives its token back', async () => {
    const clock = new FakeClock()
    const bucket = new TokenBucket({ qps: 10, burst: 1, clock })
    bucket.reserve()
    const controller = new AbortController()
    const waiting = bucket.take(controller.signal)
    const reason = new Error('stopping')
    controller.abort(reason)
    await assert.rejects(waiting, (error) => error === reason)
    assert.equal(clock.pendingTimers(), 0)
    assert.equal(bucket.reserve(), 100, 'the abandoned reservation no longer delays others')
  })

  it('take refuses an aborted signal without taking a token', async () => {
    const clock = new FakeClock()
    const bucket = new TokenBucket({ qps: 10, burst: 1, clock })
    await assert.rejects(bucket.take(AbortSignal.abort()), { name: 'AbortError' })
    assert.equal(bucket.available(), 1)
  })

  it('tryTake takes only a token that is available now and never goes into debt', () => {
    const clock = new FakeClock()
    const bucket = new TokenBucket({ qps: 2, burst: 2, clock })
    assert.deepEqual([bucket.tryTake(), bucket.tryTake(), bucket.tryTake()], [true, true, false])
    assert.equal(bucket.available(), 0)
    clock.advance(499)
    assert.equal(bucket.tryTake(), false)
    clock.advance(1)
    assert.equal(bucket.tryTake(), true)
  })

  it('never waits with an infinite rate', async () => {
    const bucket = new TokenBucket({ qps: Infinity, burst: 1, clock: new FakeClock() })
    for (let i = 0; i < 1000; i++) assert.equal(bucket.reserve(), 0)
    assert.equal(bucket.tryTake(), true)
    await bucket.take()
    assert.equal(bucket.available(), 1)
  })

  it('does not drain when the clock steps backwards', () => {
    let now = 10_000
    const clock: Clock = {
      now: () => now,
      setTimeout: () => {
        throw new Error('not used')
      },
      clearTimeout: () => undefined,
    }
    const bucket = new TokenBucket({ qps: 10, burst: 2, clock })
    bucket.reserve()
    bucket.reserve()
    now = 5000
    assert.equal(bucket.available(), 0)
    now = 10_100
    assert.ok(Math.abs(bucket.available() - 1) < 1e-9)
  })

  it('refuses a rate that is not positive and a burst that is not a positive integer', () => {
    assert.throws(() => new TokenBucket({ qps: 0, burst: 1 }), RangeError)
    assert.throws(() => new TokenBucket({ qps: Number.NaN, burst: 1 }), RangeError)
    assert.throws(() => new TokenBucket({ qps: 1, burst: 0 }), RangeError)
    assert.throws(() => new TokenBucket({ qps: 1, burst: 1.5 }), RangeError)
  })
})
