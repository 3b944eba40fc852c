import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ExponentialBackoff, jitteredBackoffMs } from './backoff.js'

describe('ExponentialBackoff', () => {
  it('backs off 5 ms, 10 ms, 20 ms ... capped at 1000 s and resets on forget', () => {
    const backoff = new ExponentialBackoff()
    const delays = Array.from({ length: 21 }, () => backoff.when('a'))
    const expected = [
      5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10_240, 20_480, 40_960, 81_920, 163_840,
      327_680, 655_360, 1_000_000, 1_000_000, 1_000_000,
    ]
    assert.deepEqual(delays, expected)
    assert.equal(backoff.failures('a'), 21)
    backoff.forget('a')
    assert.equal(backoff.failures('a'), 0)
    assert.equal(backoff.when('a'), 5)
  })

  it('counts the failures of each key independently', () => {
    const backoff = new ExponentialBackoff()
    backoff.when('a')
    backoff.when('a')
    assert.equal(backoff.when('b'), 5)
    assert.equal(backoff.when('a'), 20)
    backoff.forget('a')
    assert.equal(backoff.failures('a'), 0)
    assert.equal(backoff.failures('b'), 1)
    assert.equal(backoff.failures('never-failed'), 0)
  })

  it('stays at the cap, finite, after thousands of failures', () => {
    const backoff = new ExponentialBackoff<number>()
    let last = 0
    for (let i = 0; i < 5000; i++) last = backoff.when(42)
    assert.equal(last, 1_000_000)
  })

  it('honours a custom base and cap', () => {
    const backoff = new ExponentialBackoff({ baseMs: 100, maxMs: 350 })
    assert.deepEqual(
      [backoff.when('a'), backoff.when('a'), backoff.when('a'), backoff.when('a')],
      [100, 200, 350, 350]
    )
  })

  it('refuses a base that is not positive and finite, or a cap below the base', () => {
    assert.throws(() => new ExponentialBackoff({ baseMs: 0 }), RangeError)
    assert.throws(() => new ExponentialBackoff({ baseMs: Infinity }), RangeError)
    assert.throws(() => new ExponentialBackoff({ baseMs: Number.NaN }), RangeError)
    assert.throws(() => new ExponentialBackoff({ baseMs: 10, maxMs: 5 }), RangeError)
  })
})

describe('jitteredBackoffMs', () => {
  const noJitter = { jitter: 0 }

  it('doubles from 800 ms and caps at 30 s by default', () => {
    const delays = Array.from({ length: 9 }, (_, attempt) => jitteredBackoffMs(attempt, noJitter))
    assert.deepEqual(delays, [800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000])
  })

  it('shortens the delay by up to 20 % by default and never exceeds the cap', () => {
    assert.equal(jitteredBackoffMs(0, { random: () => 0 }), 800)
    assert.equal(jitteredBackoffMs(0, { random: () => 0.5 }), 720)
    assert.equal(jitteredBackoffMs(10, { random: () => 0.5 }), 27_000)
    for (let attempt = 0; attempt < 40; attempt++) {
      const delay = jitteredBackoffMs(attempt)
      const capped = Math.min(800 * 2 ** attempt, 30_000)
      assert.ok(delay <= capped && delay > capped * 0.8, `attempt ${attempt}: ${delay} ms`)
    }
  })

  it('spreads delays at the cap over the whole jitter range', () => {
    const delays = [0, 0.25, 0.5, 0.75, 0.999].map((r) =>
      jitteredBackoffMs(20, { baseMs: 1000, maxMs: 10_000, jitter: 0.5, random: () => r })
    )
    assert.deepEqual(delays.map(Math.round), [10_000, 8750, 7500, 6250, 5005])
  })

  it('clamps a random source that strays outside [0, 1)', () => {
    assert.equal(jitteredBackoffMs(0, { random: () => -3 }), 800)
    assert.equal(jitteredBackoffMs(0, { random: () => 7 }), 640)
  })

  it('stays finite for huge attempts and zero for a zero base', () => {
    assert.equal(jitteredBackoffMs(100_000, noJitter), 30_000)
    assert.equal(jitteredBackoffMs(100_000, { baseMs: 0, jitter: 0 }), 0)
  })

  it('refuses a negative or fractional attempt, a cap below the base and jitter outside [0, 1]', () => {
    assert.throws(() => jitteredBackoffMs(-1), RangeError)
    assert.throws(() => jitteredBackoffMs(1.5), RangeError)
    assert.throws(() => jitteredBackoffMs(0, { baseMs: 10, maxMs: 5 }), RangeError)
    assert.throws(() => jitteredBackoffMs(0, { baseMs: -1 }), RangeError)
    assert.throws(() => jitteredBackoffMs(0, { jitter: 1.5 }), RangeError)
    assert.throws(() => jitteredBackoffMs(0, { jitter: -0.1 }), RangeError)
  })
})
