import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { controllerRefOf, groupOf, isDeleting, makeControllerRef } from './owner-references.js'

const parent = {
  apiVersion: 'homelabz.com.br/v1',
  kind: 'PodService',
  metadata: { name: 'nginx', namespace: 'ns', uid: 'u-1' },
}

describe('owner references', () => {
  it('builds a blocking controller reference from the parent', () => {
    assert.deepEqual(makeControllerRef(parent), {
      apiVersion: 'homelabz.com.br/v1',
      kind: 'PodService',
      name: 'nginx',
      uid: 'u-1',
      controller: true,
      blockOwnerDeletion: true,
    })
  })

  it('finds only the reference marked as controller', () => {
    const child = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        ownerReferences: [
          { apiVersion: 'v1', kind: 'X', name: 'a', uid: 'x' },
          { apiVersion: 'v1', kind: 'Y', name: 'b', uid: 'y', controller: true },
        ],
      },
    }
    assert.equal(controllerRefOf(child)?.uid, 'y')
    assert.equal(controllerRefOf({ ...child, metadata: {} }), undefined)
  })

  it('takes the group from an apiVersion, empty for the core group', () => {
    assert.equal(groupOf('apps/v1'), 'apps')
    assert.equal(groupOf('v1'), '')
  })

  it('tells a deleting object by its deletionTimestamp', () => {
    assert.equal(
      isDeleting({ ...parent, metadata: { deletionTimestamp: '2026-01-01T00:00:00Z' } }),
      true
    )
    assert.equal(isDeleting(parent), false)
  })
})
