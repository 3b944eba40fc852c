import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { mergePatchDiff } from './child-diff.js'

describe('mergePatchDiff', () => {
  it('gives changed and added fields, removed ones as null, arrays whole, nothing for equal objects', () => {
    const observed = {
      metadata: { name: 'a', labels: { keep: '1', drop: '2' } },
      spec: { replicas: 1, ports: [{ port: 80 }], same: { x: 1 } },
    }
    const merged = {
      metadata: { name: 'a', labels: { keep: '1', add: '3' } },
      spec: { replicas: 2, ports: [{ port: 80 }, { port: 443 }], same: { x: 1 } },
    }
    assert.deepEqual(mergePatchDiff(observed, merged), {
      metadata: { labels: { drop: null, add: '3' } },
      spec: { replicas: 2, ports: [{ port: 80 }, { port: 443 }] },
    })
    assert.deepEqual(mergePatchDiff(observed, observed), {})
  })
})
