// The double-writer check of the sharding tests must catch what it claims to catch.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AuditWrite } from '../support/audit-writers.js'
import { doubleWriters } from '../support/audit-writers.js'

const write = (replica: string, at: number): AuditWrite => ({
  parent: 'p',
  replica,
  verb: 'update',
  resource: 'parents',
  receivedMs: at,
  completedMs: at + 5,
})

describe('doubleWriters', () => {
  it('flags a change of writer with no ring agreed by the new writer in between', () => {
    const found = doubleWriters([write('a', 0), write('b', 100), write('a', 200)], new Map())
    assert.equal(found.length, 2)
  })

  it('accepts a handoff separated by an agreement after the last write completed', () => {
    const agreed = new Map([['b', [50]]])
    assert.deepEqual(doubleWriters([write('a', 0), write('b', 100)], agreed), [])
  })

  it('flags an agreement that came before the old writer’s last write completed', () => {
    const agreed = new Map([['b', [2]]])
    assert.equal(doubleWriters([write('a', 0), write('b', 100)], agreed).length, 1)
  })
})
