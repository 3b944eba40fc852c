// The double-writer check of the sharding tests must catch what it claims to catch.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AuditWrite } from '../support/audit-writers.js'
import { childFaults, doubleWriters } from '../support/audit-writers.js'

const write = (replica: string, at: number): AuditWrite => ({
  parent: 'p',
  replica,
  verb: 'update',
  resource: 'parents',
  receivedMs: at,
  completedMs: at + 5,
  code: 200,
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

describe('childFaults', () => {
  const child = (verb: string, at: number, parent = 'p'): AuditWrite => ({
    ...write('a', at),
    parent,
    verb,
    resource: 'children',
  })

  it('accepts children created once and then only updated', () => {
    const writes = [child('create', 0), child('update', 10), child('create', 0, 'q')]
    assert.deepEqual(childFaults(writes, 'children', ['p', 'q']), [])
  })

  it('flags a child never created, created twice or deleted', () => {
    const writes = [child('create', 0), child('create', 5), child('create', 0, 'q')]
    writes.push(child('delete', 10, 'q'))
    assert.deepEqual(childFaults(writes, 'children', ['p', 'q', 'r']), [
      'p: created 2 times (a 200, a 200), deleted 0 times',
      'q: created 1 times (a 200), deleted 1 times',
      'r: created 0 times (), deleted 0 times',
    ])
  })

  it('expects as many creates as a parent has children, and flags one child missing', () => {
    const writes = [child('create', 0), child('create', 1), child('create', 0, 'q')]
    assert.deepEqual(childFaults(writes, 'children', ['p', 'q'], 2), [
      'q: created 1 times (a 200), deleted 0 times',
    ])
  })

  it("tolerates a replica's refused re-create of its own child, not another replica's", () => {
    const own = { ...child('create', 0), code: 201 }
    const again = { ...child('create', 9), code: 409 }
    assert.deepEqual(childFaults([own, again], 'children', ['p']), [])
    const other = { ...again, replica: 'b' }
    assert.deepEqual(childFaults([own, other], 'children', ['p']), [
      'p: created 2 times (a 201, b 409), deleted 0 times',
    ])
    const refusedFirst = [
      { ...child('create', 0), code: 409 },
      { ...child('create', 9), code: 201 },
    ]
    assert.equal(childFaults(refusedFirst, 'children', ['p']).length, 1)
  })

  it('ignores writes to other resources', () => {
    const writes = [child('create', 0), { ...child('delete', 5), resource: 'parents' }]
    assert.deepEqual(childFaults(writes, 'children', ['p']), [])
  })
})
