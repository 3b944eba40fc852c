import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { FakeClock } from './fake-clock.js'

describe('FakeClock', () => {
  it('starts at the given time and moves only when advanced', () => {
    const clock = new FakeClock(1000)
    assert.equal(clock.now(), 1000)
    clock.advance(250)
    assert.equal(clock.now(), 1250)
    assert.equal(new FakeClock().now(), 0)
  })

  it('fires nothing before its due time', () => {
    const clock = new FakeClock()
    let fired = 0
    clock.setTimeout(() => fired++, 100)
    clock.advance(99)
    assert.equal(fired, 0)
    clock.advance(1)
    assert.equal(fired, 1)
    clock.advance(1000)
    assert.equal(fired, 1, 'fires once')
  })

  it('fires due timers in due order, ties in scheduling order, each at its due time', () => {
    const clock = new FakeClock()
    const fired: string[] = []
    const at = (name: string) => () => fired.push(`${name}@${clock.now()}`)
    clock.setTimeout(at('c'), 30)
    clock.setTimeout(at('a'), 10)
    clock.setTimeout(at('b1'), 20)
    clock.setTimeout(at('b2'), 20)
    clock.setTimeout(at('late'), 31)
    clock.advance(30)
    assert.deepEqual(fired, ['a@10', 'b1@20', 'b2@20', 'c@30'])
    assert.equal(clock.now(), 30)
  })

  it('fires timers scheduled by a callback when they fall due within the same advance', () => {
    const clock = new FakeClock()
    const fired: number[] = []
    const tick = (): void => {
      fired.push(clock.now())
      clock.setTimeout(tick, 10)
    }
    clock.setTimeout(tick, 10)
    clock.advance(35)
    assert.deepEqual(fired, [10, 20, 30])
    assert.equal(clock.nextDueInMs(), 5)
  })

  it('does not fire a cancelled timer, and cancelling twice or after firing does nothing', () => {
    const clock = new FakeClock()
    let fired = 0
    const cancelled = clock.setTimeout(() => fired++, 10)
    const kept = clock.setTimeout(() => fired++, 10)
    clock.clearTimeout(cancelled)
    clock.clearTimeout(cancelled)
    clock.advance(10)
    clock.clearTimeout(kept)
    assert.equal(fired, 1)
    assert.equal(clock.pendingTimers(), 0)
  })

  it('fires non-positive delays at the next advance and never fires an Infinity delay', () => {
    const clock = new FakeClock()
    const fired: string[] = []
    clock.setTimeout(() => fired.push('zero'), 0)
    clock.setTimeout(() => fired.push('negative'), -5)
    clock.setTimeout(() => fired.push('never'), Infinity)
    assert.equal(clock.pendingTimers(), 2)
    clock.advance(0)
    assert.deepEqual(fired, ['zero', 'negative'])
    clock.advance(Number.MAX_SAFE_INTEGER)
    assert.deepEqual(fired, ['zero', 'negative'])
  })

  it('reports the pending timers and the delay until the next one', () => {
    const clock = new FakeClock()
    assert.equal(clock.nextDueInMs(), undefined)
    clock.setTimeout(() => undefined, 50)
    clock.setTimeout(() => undefined, 20)
    assert.equal(clock.pendingTimers(), 2)
    assert.equal(clock.nextDueInMs(), 20)
    clock.advance(20)
    assert.equal(clock.pendingTimers(), 1)
    assert.equal(clock.nextDueInMs(), 30)
  })

  it('refuses to move backwards', () => {
    const clock = new FakeClock()
    assert.throws(() => {
      clock.advance(-1)
    }, RangeError)
    assert.throws(() => {
      clock.advance(Number.NaN)
    }, RangeError)
  })
})
