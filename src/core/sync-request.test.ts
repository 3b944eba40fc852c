import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import type { KubeObject } from './kube-object.js'
import {
  SYNC_REQUEST_ANNOTATION,
  SYNC_RESULT_ANNOTATION,
  formatSyncResult,
  parseSyncResult,
  pendingSyncRequest,
} from './sync-request.js'

function parent(annotations: Record<string, string>, extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: 'x/v1',
    kind: 'P',
    metadata: { name: 'p', namespace: 'ns', resourceVersion: '1', annotations },
    spec: { replicas: 1 },
    ...extra,
  }
}

describe('sync requests', () => {
  it('a request is pending until the result carries its nonce', () => {
    assert.equal(pendingSyncRequest(parent({})), undefined)
    assert.equal(pendingSyncRequest(parent({ [SYNC_REQUEST_ANNOTATION]: 'n1' })), 'n1')
    assert.equal(
      pendingSyncRequest(
        parent({ [SYNC_REQUEST_ANNOTATION]: 'n2', [SYNC_RESULT_ANNOTATION]: 'n1 ok' })
      ),
      'n2'
    )
    assert.equal(
      pendingSyncRequest(
        parent({ [SYNC_REQUEST_ANNOTATION]: 'n2', [SYNC_RESULT_ANNOTATION]: 'n2 error: boom' })
      ),
      undefined
    )
  })

  it('formats outcomes on one line, cut at the limit, and parses them back', () => {
    assert.deepEqual(parseSyncResult(formatSyncResult('n1')), { nonce: 'n1', ok: true })
    const failed = formatSyncResult('n1', new Error('hook said\n  no'))
    assert.equal(failed, 'n1 error: hook said no')
    assert.deepEqual(parseSyncResult(failed), { nonce: 'n1', ok: false, reason: 'hook said no' })
    const long = formatSyncResult('n1', new Error('x'.repeat(5000)))
    assert.equal(long.length, 'n1 error: '.length + 1000)
    assert.equal(parseSyncResult('garbage'), undefined)
  })
})
