import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { TerminalError } from '../../runtime/queue/reconcile-errors.js'
import { HookCallError } from '../hooks/hook-errors.js'
import { HookRecovery, isHookCallFailure } from './hook-recovery.js'

const hookDown = {
  result: 'error',
  error: new HookCallError('http://h', 'http error: refused'),
} as const
const success = { result: 'success' } as const

describe('HookRecovery', () => {
  it('re-queues every parent that failed in its hook at the first success', () => {
    const requeued: string[][] = []
    const recovery = new HookRecovery((keys) => requeued.push([...keys]))
    recovery.onOutcome('a', hookDown)
    recovery.onOutcome('b', hookDown)
    recovery.onOutcome('c', hookDown)
    assert.equal(recovery.failing, 3)
    assert.deepEqual(requeued, [])
    recovery.onOutcome('b', success)
    assert.deepEqual(requeued, [['a', 'c']])
    assert.equal(recovery.failing, 0)
    recovery.onOutcome('d', success)
    assert.deepEqual(requeued.length, 1, 'nothing more to re-queue')
  })

  it('ignores failures that are not hook calls, and forgets parents that stopped failing', () => {
    const requeued: string[][] = []
    const recovery = new HookRecovery((keys) => requeued.push([...keys]))
    recovery.onOutcome('a', { result: 'error', error: new Error('conflict') })
    recovery.onOutcome('b', hookDown)
    recovery.onOutcome('b', { result: 'terminal', error: new TerminalError('bad spec') })
    recovery.onOutcome('c', success)
    assert.deepEqual(requeued, [])
  })

  it('finds a hook failure wrapped as a cause', () => {
    assert.ok(isHookCallFailure(new Error('sync failed', { cause: hookDown.error })))
    assert.ok(!isHookCallFailure(new Error('other')))
  })
})
