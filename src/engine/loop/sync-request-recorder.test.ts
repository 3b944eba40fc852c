import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import type { KubeObject } from '../../core/kube-object.js'
import { SYNC_REQUEST_ANNOTATION, SYNC_RESULT_ANNOTATION } from '../../core/sync-request.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import { Action } from '../../runtime/queue/controller-loop.js'
import { isSyncResultOnlyUpdate, recordingSyncRequest } from './sync-request-recorder.js'

const ref: ResourceRef = { group: 'x', version: 'v1', resource: 'ps', namespaced: true }

function fullParent(
  annotations: Record<string, string>,
  extra: Partial<KubeObject> = {}
): KubeObject {
  return {
    apiVersion: 'x/v1',
    kind: 'P',
    metadata: { name: 'p', namespace: 'ns', resourceVersion: '1', annotations },
    spec: { replicas: 1 },
    ...extra,
  }
}

function parent(annotations: Record<string, string>): KubeObject {
  return { apiVersion: 'x/v1', kind: 'P', metadata: { name: 'p', namespace: 'ns', annotations } }
}

describe('recordingSyncRequest', () => {
  it('answers a pending request with ok after a successful sync, passing its action through', async () => {
    const written: string[] = []
    const action = await recordingSyncRequest(
      parent({ [SYNC_REQUEST_ANNOTATION]: 'n1' }),
      ref,
      (_ref, _parent, value) => {
        written.push(value)
        return Promise.resolve()
      },
      () => Promise.resolve(Action.requeue(5))
    )
    assert.deepEqual(action, Action.requeue(5))
    assert.deepEqual(written, ['n1 ok'])
  })

  it('answers with the error of a failed sync and still fails the sync', async () => {
    const written: string[] = []
    await assert.rejects(
      recordingSyncRequest(
        parent({ [SYNC_REQUEST_ANNOTATION]: 'n1' }),
        ref,
        (_ref, _parent, value) => {
          written.push(value)
          return Promise.resolve()
        },
        () => Promise.reject(new Error('hook answered 500'))
      ),
      /hook answered 500/
    )
    assert.deepEqual(written, ['n1 error: hook answered 500'])
  })

  it('writes nothing without a request, or for one already answered', async () => {
    let writes = 0
    const write = (): Promise<void> => {
      writes++
      return Promise.resolve()
    }
    const sync = (): Promise<Action> => Promise.resolve(Action.awaitChange())
    await recordingSyncRequest(parent({}), ref, write, sync)
    await recordingSyncRequest(
      parent({ [SYNC_REQUEST_ANNOTATION]: 'n1', [SYNC_RESULT_ANNOTATION]: 'n1 ok' }),
      ref,
      write,
      sync
    )
    await recordingSyncRequest(undefined, ref, write, sync)
    assert.equal(writes, 0)
  })

  describe('isSyncResultOnlyUpdate', () => {
    it('an update that only wrote the result is the engine’s own echo; anything else is news', () => {
      const asked = fullParent({ [SYNC_REQUEST_ANNOTATION]: 'n1' })
      const answered = fullParent(
        { [SYNC_REQUEST_ANNOTATION]: 'n1', [SYNC_RESULT_ANNOTATION]: 'n1 ok' },
        { metadata: { ...asked.metadata, resourceVersion: '2' } }
      )
      answered.metadata.annotations = {
        [SYNC_REQUEST_ANNOTATION]: 'n1',
        [SYNC_RESULT_ANNOTATION]: 'n1 ok',
      }
      assert.equal(isSyncResultOnlyUpdate(asked, answered), true)
      // The request itself, a spec change together with the answer, or a replayed object are news.
      assert.equal(isSyncResultOnlyUpdate(fullParent({}), asked), false)
      assert.equal(isSyncResultOnlyUpdate(asked, { ...answered, spec: { replicas: 2 } }), false)
      assert.equal(isSyncResultOnlyUpdate(asked, asked), false)
    })
  })
})
