import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ControlPlaneStartError } from './control-plane-start-error.js'
import { PORT_CONFLICT_ATTEMPTS, retryOnPortConflict } from './retry-on-port-conflict.js'

const conflict = (): ControlPlaneStartError =>
  new ControlPlaneStartError(
    'kwok',
    'kwok exited: listen tcp 127.0.0.1:1: bind: address already in use'
  )

/** A start that fails with `errors` in turn, then succeeds; counts its calls. */
function scriptedStart(errors: Error[]): { start: () => Promise<void>; calls: () => number } {
  let calls = 0
  return {
    start: () => {
      const error = errors[calls++]
      return error === undefined ? Promise.resolve() : Promise.reject(error)
    },
    calls: () => calls,
  }
}

describe('retryOnPortConflict', () => {
  it('starts again on new ports after a port conflict and then succeeds', async () => {
    const start = scriptedStart([conflict()])
    let repicks = 0
    const retries: string[] = []
    await retryOnPortConflict(
      start.start,
      () => {
        repicks++
        return Promise.resolve()
      },
      (line) => retries.push(line)
    )
    assert.equal(start.calls(), 2)
    assert.equal(repicks, 1)
    assert.deepEqual(retries, ['kwok: its port was taken; retrying with a new port'])
  })

  it('gives up after the last attempt and throws the conflict itself', async () => {
    const start = scriptedStart(Array.from({ length: 10 }, conflict))
    await assert.rejects(
      retryOnPortConflict(
        start.start,
        () => Promise.resolve(),
        () => undefined
      ),
      /address already in use/
    )
    assert.equal(start.calls(), PORT_CONFLICT_ATTEMPTS)
  })

  it('throws any other failure at once without starting again', async () => {
    const start = scriptedStart([new ControlPlaneStartError('etcd', 'etcd did not become ready')])
    let repicks = 0
    await assert.rejects(
      retryOnPortConflict(
        start.start,
        () => {
          repicks++
          return Promise.resolve()
        },
        () => undefined
      ),
      /did not become ready/
    )
    assert.equal(start.calls(), 1)
    assert.equal(repicks, 0)
  })
})
