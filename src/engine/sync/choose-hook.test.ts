import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { chooseHook } from './choose-hook.js'
import type { HookChoice, HookChoiceState } from './choose-hook.js'

function state(overrides: Partial<HookChoiceState>): HookChoiceState {
  return { syncEnabled: true, finalizeEnabled: true, deleting: false, inScope: true, ...overrides }
}

describe('chooseHook', () => {
  it('calls sync for a live, in-scope parent', () => {
    assert.equal(chooseHook(state({})), 'sync')
  })

  it('calls finalize for a deleting parent, and for one that left the selector', () => {
    assert.equal(chooseHook(state({ deleting: true })), 'finalize')
    assert.equal(chooseHook(state({ inScope: false })), 'finalize')
  })

  it('falls back to sync when finalize is not enabled, whatever the parent', () => {
    const cases: [Partial<HookChoiceState>, HookChoice][] = [
      [{ finalizeEnabled: false, deleting: true }, 'sync'],
      [{ finalizeEnabled: false, inScope: false }, 'sync'],
    ]
    for (const [overrides, expected] of cases) assert.equal(chooseHook(state(overrides)), expected)
  })

  it('chooses none when no hook fits: no sync hook and nothing to finalize', () => {
    assert.equal(chooseHook(state({ syncEnabled: false })), 'none')
    assert.equal(chooseHook(state({ syncEnabled: false, finalizeEnabled: false })), 'none')
    assert.equal(chooseHook(state({ syncEnabled: false, deleting: true })), 'finalize')
  })
})
