import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import { decideFinalizer, shouldManageChildren } from './finalizer-step.js'
import type { FinalizerDecision, FinalizerState } from './finalizer-step.js'

const FINALIZER = 'metacontroller.io/compositecontroller-web'

function parent(finalizers: string[], deleting = false): KubeObject {
  return {
    apiVersion: 'x/v1',
    kind: 'P',
    metadata: {
      name: 'p',
      finalizers,
      ...(deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}),
    },
  }
}

describe('decideFinalizer', () => {
  it('decides every combination of enabled, present and deleting', () => {
    const table: [FinalizerState, FinalizerDecision][] = [
      [{ enabled: true, present: false, deleting: false }, 'add'],
      [{ enabled: true, present: true, deleting: false }, 'keep'],
      // A parent being deleted cannot take a new finalizer.
      [{ enabled: true, present: false, deleting: true }, 'keep'],
      [{ enabled: true, present: true, deleting: true }, 'keep'],
      // An earlier spec had a finalize hook: its finalizer goes.
      [{ enabled: false, present: true, deleting: false }, 'remove'],
      [{ enabled: false, present: true, deleting: true }, 'remove'],
      [{ enabled: false, present: false, deleting: false }, 'keep'],
      [{ enabled: false, present: false, deleting: true }, 'keep'],
    ]
    for (const [state, expected] of table)
      assert.equal(decideFinalizer(state), expected, JSON.stringify(state))
  })
})

describe('shouldManageChildren', () => {
  it('manages the children of a parent that is not being deleted', () => {
    assert.equal(shouldManageChildren(parent([]), FINALIZER, false), true)
  })

  it('manages a deleting parent only while our finalizer holds it', () => {
    assert.equal(shouldManageChildren(parent([FINALIZER], true), FINALIZER, true), true)
    assert.equal(shouldManageChildren(parent([], true), FINALIZER, true), false)
    assert.equal(shouldManageChildren(parent([FINALIZER], true), FINALIZER, false), false)
  })

  it("leaves a deleting parent's children to the garbage collector's own finalizers", () => {
    for (const gc of ['foregroundDeletion', 'orphan'])
      assert.equal(shouldManageChildren(parent([FINALIZER, gc], true), FINALIZER, true), false)
  })
})
