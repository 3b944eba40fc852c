import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { REDACTED, redactSecrets } from './redact-secrets.js'

describe('redactSecrets', () => {
  it('hides the values of every Secret at any depth, keeps keys and every other object', () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 's',
        annotations: {
          'metacontroller.k8s.io/last-applied-configuration': '{"data":{"password":"aHVudGVy"}}',
          note: 'kept',
        },
      },
      data: { password: 'aHVudGVy' },
      stringData: { token: 'abc' },
    }
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', data: { password: 'visible' } }
    const body = {
      parent: { kind: 'Thing', spec: { secretName: 's' } },
      children: { 'Secret.v1': { s: secret }, 'ConfigMap.v1': { c: configMap } },
      related: [secret],
    }
    const out = redactSecrets(body) as typeof body
    for (const redacted of [out.children['Secret.v1'].s, out.related[0] ?? secret]) {
      assert.deepEqual(redacted.data, { password: REDACTED })
      assert.deepEqual(redacted.stringData, { token: REDACTED })
      assert.equal(
        redacted.metadata.annotations['metacontroller.k8s.io/last-applied-configuration'],
        REDACTED
      )
      assert.equal(redacted.metadata.annotations.note, 'kept')
    }
    assert.deepEqual(out.children['ConfigMap.v1'], body.children['ConfigMap.v1'])
    assert.deepEqual(out.parent, body.parent)
    assert.equal(secret.data.password, 'aHVudGVy', 'the input is not changed')
    assert.doesNotMatch(JSON.stringify(out), /aHVudGVy|"abc"/)
  })
})
