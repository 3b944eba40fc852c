import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Clock } from '../clock/clock.js'
import { EventLoopWatchdog } from './event-loop-watchdog.js'
import { FakeClock } from '../clock/fake-clock.js'

/**
 * A fake clock whose time can jump without firing timers: what a blocked event loop looks like
 * from inside (time passed, no callback ran).
 */
function blockableClock(): { clock: Clock; fake: FakeClock; block: (ms: number) => void } {
  const fake = new FakeClock(1_000_000)
  let skew = 0
  return {
    fake,
    clock: {
      now: () => fake.now() + skew,
      setTimeout: (fn, ms) => fake.setTimeout(fn, ms),
      clearTimeout: (handle) => {
        fake.clearTimeout(handle)
      },
    },
    block: (ms) => {
      skew += ms
    },
  }
}

describe('EventLoopWatchdog', () => {
  const options = { thresholdMs: 10_000, windowMs: 30_000, intervalMs: 500 }

  it('stays healthy while ticks fire on time, and when not started', () => {
    const { clock, fake } = blockableClock()
    const watchdog = new EventLoopWatchdog({ ...options, clock })
    assert.deepEqual(watchdog.unhealthy(), [])
    watchdog.start()
    fake.advance(60_000)
    assert.deepEqual(watchdog.unhealthy(), [])
    watchdog.stop()
    assert.equal(fake.pendingTimers(), 0, 'stop cancels the sampling timer')
  })

  it('ignores stalls up to the threshold', () => {
    const { clock, fake, block } = blockableClock()
    const watchdog = new EventLoopWatchdog({ ...options, clock })
    watchdog.start()
    block(9_000)
    fake.advance(500)
    assert.deepEqual(watchdog.unhealthy(), [])
    watchdog.stop()
  })

  it('reports a stall beyond the threshold for the window, then recovers', () => {
    const { clock, fake, block } = blockableClock()
    const watchdog = new EventLoopWatchdog({ ...options, clock })
    watchdog.start()
    fake.advance(2_000)
    block(12_000)
    // A probe handled right after the stall, before the late tick: the stall in progress counts.
    assert.match(
      watchdog.unhealthy()[0] ?? '',
      /event loop blocked for 1[12]\.\d s \(10\.0 s threshold\)/
    )
    fake.advance(500)
    assert.match(watchdog.unhealthy()[0] ?? '', /blocked for 12\.0 s 0\.0 s ago/)
    fake.advance(29_500)
    assert.equal(watchdog.unhealthy().length, 1, 'still within the 30 s window')
    fake.advance(1_000)
    assert.deepEqual(watchdog.unhealthy(), [], 'healthy once the window has passed')
    watchdog.stop()
  })

  it('keeps reporting a loop that stalls again and again', () => {
    const { clock, fake, block } = blockableClock()
    const watchdog = new EventLoopWatchdog({ ...options, clock })
    watchdog.start()
    for (let i = 0; i < 5; i++) {
      block(11_000)
      fake.advance(500)
      fake.advance(20_000)
      assert.equal(watchdog.unhealthy().length, 1, `after stall ${i + 1}`)
    }
    watchdog.stop()
  })
})
