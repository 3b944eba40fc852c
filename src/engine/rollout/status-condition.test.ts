import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { findStatusCondition, setStatusCondition } from './status-condition.js'

const waiting = { type: 'Updated', status: 'False', reason: 'RolloutWaiting', message: 'why' }

describe('setStatusCondition', () => {
  it('starts from an empty status when the hook returned null (upstream panics)', () => {
    assert.deepEqual(setStatusCondition(null, waiting), { conditions: [waiting] })
  })

  it('replaces a condition of the same type in place and keeps the others in order', () => {
    const status = {
      phase: 'x',
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'Updated', status: 'True', reason: 'OnLatestRevision', message: 'old' },
        { type: 'Other', status: 'False' },
      ],
    }
    const result = setStatusCondition(status, waiting)
    assert.deepEqual(result, {
      phase: 'x',
      conditions: [{ type: 'Ready', status: 'True' }, waiting, { type: 'Other', status: 'False' }],
    })
    assert.equal(status.conditions[1]?.reason, 'OnLatestRevision', 'the input is not changed')
  })

  it('appends a new type and leaves out an empty reason or message', () => {
    assert.deepEqual(setStatusCondition({ conditions: [] }, { type: 'Updated', status: 'True' }), {
      conditions: [{ type: 'Updated', status: 'True' }],
    })
  })
})

describe('findStatusCondition', () => {
  it('finds a condition by type and tolerates objects without status', () => {
    assert.deepEqual(
      findStatusCondition({ status: { conditions: [{ type: 'Ready', status: 'True' }] } }, 'Ready'),
      { type: 'Ready', status: 'True' }
    )
    assert.equal(findStatusCondition({}, 'Ready'), undefined)
    assert.equal(findStatusCondition({ status: { conditions: 'x' } }, 'Ready'), undefined)
  })
})
