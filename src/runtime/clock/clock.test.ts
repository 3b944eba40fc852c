import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { systemClock } from './clock.js'

/** Sleeps on the real clock, for the few milliseconds these tests need. */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

describe('systemClock', () => {
  it('reads epoch milliseconds that never go backwards', () => {
    const first = systemClock.now()
    assert.ok(Math.abs(first - Date.now()) < 1000, 'close to the wall clock')
    let previous = first
    for (let i = 0; i < 1000; i++) {
      const next = systemClock.now()
      assert.ok(next >= previous)
      previous = next
    }
  })

  it('runs a timer once its delay has passed', async () => {
    const start = systemClock.now()
    let firedAt: number | undefined
    systemClock.setTimeout(() => {
      firedAt = systemClock.now()
    }, 5)
    await sleep(30)
    assert.ok(firedAt !== undefined, 'fired')
    assert.ok(firedAt - start >= 4, `fired after ${firedAt - start} ms`)
  })

  it('does not run a cleared timer, and clearing a fired timer does nothing', async () => {
    let cleared = 0
    const handle = systemClock.setTimeout(() => cleared++, 1)
    systemClock.clearTimeout(handle)
    let fired = 0
    const firedHandle = systemClock.setTimeout(() => fired++, 1)
    await sleep(20)
    systemClock.clearTimeout(firedHandle)
    assert.equal(cleared, 0)
    assert.equal(fired, 1)
  })

  it('does not fire a delay beyond 2^31 - 1 ms early, where Node would fire it after 1 ms', async () => {
    let fired = 0
    const long = systemClock.setTimeout(() => fired++, 2 ** 31 + 1000)
    const never = systemClock.setTimeout(() => fired++, Infinity)
    await sleep(10)
    systemClock.clearTimeout(long)
    systemClock.clearTimeout(never)
    assert.equal(fired, 0)
  })
})
