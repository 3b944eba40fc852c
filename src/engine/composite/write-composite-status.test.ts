import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { JsonObject, KubeObject } from '../../core/kube-object.js'
import { ConflictError } from '../../kube/api-error.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import { writeCompositeStatus } from './write-composite-status.js'
import type { StatusTarget } from './write-composite-status.js'

const REF: ResourceRef = { group: 'example.com', version: 'v1', resource: 'webs', namespaced: true }

function parentAt(resourceVersion: string, status?: JsonObject): KubeObject {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Web',
    metadata: { name: 'web', namespace: 'ns', uid: 'uid-web', generation: 2, resourceVersion },
    ...(status === undefined ? {} : { status }),
  }
}

/** A status target over one live parent; `conflicts` first status writes answer 409. */
function target(live: KubeObject, conflicts = 0) {
  const calls: string[] = []
  let left = conflicts
  let version = Number(live.metadata.resourceVersion)
  const write = (_ref: ResourceRef, object: KubeObject): Promise<KubeObject> => {
    calls.push(`put ${object.metadata.resourceVersion ?? ''}`)
    if (left-- > 0 || object.metadata.resourceVersion !== String(version)) {
      return Promise.reject(
        new ConflictError('conflict', {
          statusCode: 409,
          reason: 'Conflict',
          request: { method: 'PUT', path: '/x' },
        })
      )
    }
    version++
    live = { ...object, metadata: { ...object.metadata, resourceVersion: String(version) } }
    return Promise.resolve(live)
  }
  const client: StatusTarget['client'] = {
    get: () => {
      calls.push('get')
      return Promise.resolve(structuredClone(live))
    },
    update: write,
    updateStatus: write,
  }
  return { calls, target: { client, ref: REF, hasStatusSubresource: true } }
}

describe('writeCompositeStatus', () => {
  it('writes nothing again over the cached parent it just wrote the same status over', async () => {
    const cached = parentAt('5')
    const { calls, target: t } = target(cached)
    await writeCompositeStatus(t, cached, { ready: true, observedGeneration: 2 })
    // The next sync runs before the watch brings version 6: the cache still holds `cached`.
    await writeCompositeStatus(t, cached, { ready: true, observedGeneration: 2 })
    assert.deepEqual(calls, ['put 5'])
  })

  it('writes a different status over the same cached parent', async () => {
    const cached = parentAt('5')
    const { calls, target: t } = target(cached)
    await writeCompositeStatus(t, cached, { ready: true, observedGeneration: 2 })
    await writeCompositeStatus(t, cached, { ready: false, observedGeneration: 2 })
    // The second write starts from the stale copy (409), then re-reads and writes.
    assert.deepEqual(calls, ['put 5', 'put 5', 'get', 'put 6'])
  })

  it('compares a newer cached parent by its own status, not by what was written before', async () => {
    const cached = parentAt('5')
    const { calls, target: t } = target(cached)
    await writeCompositeStatus(t, cached, { ready: true, observedGeneration: 2 })
    // Someone else reset the status: the cache now holds a new object without ours.
    const newer = parentAt('6', { ready: false })
    await writeCompositeStatus(t, newer, { ready: true, observedGeneration: 2 })
    assert.deepEqual(calls, ['put 5', 'put 6'])
  })

  it('remembers a status written after a conflict as written over the cached parent', async () => {
    const cached = parentAt('5')
    const { calls, target: t } = target(cached, 1)
    await writeCompositeStatus(t, cached, { ready: true, observedGeneration: 2 })
    await writeCompositeStatus(t, cached, { ready: true, observedGeneration: 2 })
    assert.deepEqual(calls, ['put 5', 'get', 'put 5'])
  })
})
