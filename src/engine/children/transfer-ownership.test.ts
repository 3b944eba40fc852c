import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ManagedFieldsEntry } from './transfer-ownership.js'
import { managedFieldsOf, ownedFieldsOutside, transferOwnership } from './transfer-ownership.js'

const engineUpdate: ManagedFieldsEntry = {
  manager: 'metacontroller-ts',
  operation: 'Update',
  apiVersion: 'v1',
  time: '2026-01-01T00:00:00Z',
  fieldsType: 'FieldsV1',
  fieldsV1: { 'f:data': { '.': {}, 'f:a': {}, 'f:old': {} } },
}
const statusWriter: ManagedFieldsEntry = {
  manager: 'kube-controller-manager',
  operation: 'Update',
  subresource: 'status',
  fieldsV1: { 'f:status': {} },
}

describe('transferOwnership', () => {
  it("moves the engine's update fields into the apply entry, keeping other managers", () => {
    const mine: ManagedFieldsEntry = {
      manager: 'metacontroller',
      operation: 'Apply',
      fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } } },
    }
    const out = transferOwnership(
      [engineUpdate, statusWriter, mine],
      new Set(['metacontroller-ts', 'metacontroller']),
      'metacontroller'
    )
    assert.deepEqual(out, [
      statusWriter,
      {
        manager: 'metacontroller',
        operation: 'Apply',
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:data': { '.': {}, 'f:a': {}, 'f:old': {} },
        },
      },
    ])
  })

  it('says so when there is nothing to take over', () => {
    assert.equal(transferOwnership([statusWriter], new Set(['metacontroller-ts']), 'm'), undefined)
  })

  it('reads managed fields defensively', () => {
    assert.deepEqual(managedFieldsOf({ managedFields: [engineUpdate, 'junk'] }), [engineUpdate])
    assert.deepEqual(managedFieldsOf({}), [])
  })
})

describe('ownedFieldsOutside', () => {
  const applied: ManagedFieldsEntry = {
    manager: 'metacontroller',
    operation: 'Apply',
    fieldsV1: {
      'f:data': { 'f:a': {}, 'f:old': {} },
      'f:metadata': { 'f:ownerReferences': { 'k:{"uid":"p"}': { '.': {} } } },
    },
  }

  it('lists fields applied before that the configuration no longer sets', () => {
    const config = { data: { a: '1' }, metadata: { ownerReferences: [{ uid: 'p' }] } }
    assert.deepEqual(ownedFieldsOutside(config, [applied, engineUpdate], 'metacontroller'), [
      'data.old',
    ])
  })

  it('checks lists as a whole and ignores other managers', () => {
    const config = { data: { a: '1', old: '2' }, metadata: { ownerReferences: [] } }
    assert.deepEqual(ownedFieldsOutside(config, [applied], 'metacontroller'), [])
    assert.deepEqual(ownedFieldsOutside({}, [applied], 'someone-else'), [])
  })
})
