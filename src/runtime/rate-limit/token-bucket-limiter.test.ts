import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { FakeClock } from '../clock/fake-clock.js'
import { DEFAULT_CLIENT_RATE_LIMIT, tokenBucketLimiter } from './token-bucket-limiter.js'
import { settle } from '../../../test/support/event-loop-turns.js'

describe('tokenBucketLimiter', () => {
  it('returns no limiter for qps 0 (off) or Infinity', () => {
    assert.equal(tokenBucketLimiter({ qps: 0, burst: 10 }), undefined)
    assert.equal(tokenBucketLimiter({ qps: Infinity, burst: 10 }), undefined)
  })

  it('returns a limiter for a finite positive qps, such as the default', () => {
    assert.ok(tokenBucketLimiter(DEFAULT_CLIENT_RATE_LIMIT, new FakeClock()))
    assert.deepEqual(DEFAULT_CLIENT_RATE_LIMIT, { qps: 1000, burst: 2000 })
  })

  it('lets a burst through without waiting, reporting 0 ms waited', async () => {
    const limiter = tokenBucketLimiter({ qps: 5, burst: 3 }, new FakeClock())
    assert.ok(limiter)
    for (let i = 0; i < 3; i++) assert.equal(await limiter.take(), 0)
  })

  it('makes the take after the burst wait 1000/qps ms and reports the wait', async () => {
    const clock = new FakeClock()
    const limiter = tokenBucketLimiter({ qps: 5, burst: 2 }, clock)
    assert.ok(limiter)
    await limiter.take()
    await limiter.take()
    let waited: number | undefined
    const taking = limiter.take().then((ms) => {
      waited = ms
    })
    await settle()
    assert.equal(waited, undefined, 'waits while the bucket is empty')
    assert.equal(clock.nextDueInMs(), 200, 'scheduled 1000/qps ms out')
    clock.advance(199)
    await settle()
    assert.equal(waited, undefined)
    clock.advance(1)
    await taking
    assert.equal(waited, 200)
  })

  it('spaces queued takes 1000/qps ms apart', async () => {
    const clock = new FakeClock()
    const limiter = tokenBucketLimiter({ qps: 10, burst: 1 }, clock)
    assert.ok(limiter)
    assert.equal(await limiter.take(), 0)
    const waits: number[] = []
    const takes = [limiter.take(), limiter.take()].map((p) => p.then((ms) => waits.push(ms)))
    clock.advance(100)
    await settle()
    assert.deepEqual(waits, [100])
    clock.advance(100)
    await Promise.all(takes)
    assert.deepEqual(waits, [100, 200])
  })

  it('rejects a take whose signal aborts while it waits', async () => {
    const clock = new FakeClock()
    const limiter = tokenBucketLimiter({ qps: 1, burst: 1 }, clock)
    assert.ok(limiter)
    await limiter.take()
    const controller = new AbortController()
    const taking = limiter.take(controller.signal)
    const reason = new Error('request cancelled')
    controller.abort(reason)
    await assert.rejects(taking, (error) => error === reason)
  })
})
