import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { getEventListeners } from 'node:events'
import { timeoutSignal } from './timeout-signal.js'

describe('timeoutSignal', () => {
  it('aborts with a TimeoutError once the deadline passes', async () => {
    const { signal } = timeoutSignal(5)
    await new Promise((resolve) => setTimeout(resolve, 30))
    assert.equal(signal.aborted, true)
    assert.equal((signal.reason as DOMException).name, 'TimeoutError')
  })

  it('waits at least as long as Node timers can for a deadline beyond their range', async () => {
    // setTimeout fires a delay over 2^31 - 1 ms after 1 ms: a 600 h hook timeout aborted at once.
    const { signal, release } = timeoutSignal(600 * 3_600_000)
    await new Promise((resolve) => setTimeout(resolve, 30))
    assert.equal(signal.aborted, false)
    release()
  })

  it('never fires after release, and leaves no listener on its parents', async () => {
    const parent = new AbortController()
    const { signal, release } = timeoutSignal(5, [parent.signal])
    assert.equal(getEventListeners(parent.signal, 'abort').length, 1)
    release()
    assert.equal(getEventListeners(parent.signal, 'abort').length, 0)
    await new Promise((resolve) => setTimeout(resolve, 30))
    parent.abort(new Error('stopped'))
    assert.equal(signal.aborted, false)
  })

  it('aborts with the reason of whichever parent aborts first', () => {
    const a = new AbortController()
    const b = new AbortController()
    const { signal } = timeoutSignal(60_000, [a.signal, undefined, b.signal])
    b.abort(new Error('b stopped'))
    a.abort(new Error('a stopped'))
    assert.equal((signal.reason as Error).message, 'b stopped')
  })

  it('starts aborted when a parent already is', () => {
    const parent = new AbortController()
    parent.abort(new Error('already'))
    const { signal } = timeoutSignal(60_000, [parent.signal])
    assert.equal(signal.aborted, true)
    assert.equal((signal.reason as Error).message, 'already')
  })

  it('has no deadline when the timeout is 0', async () => {
    const { signal } = timeoutSignal(0)
    await new Promise((resolve) => setTimeout(resolve, 20))
    assert.equal(signal.aborted, false)
  })
})
