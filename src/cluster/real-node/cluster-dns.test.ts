import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { describeDnsPod } from './cluster-dns.js'

describe('cluster DNS timeout message', () => {
  it("names the Pod's phase, readiness and why its container is not running", () => {
    const text = describeDnsPod({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'coredns-abc' },
      status: {
        phase: 'Pending',
        conditions: [{ type: 'Ready', status: 'False' }],
        containerStatuses: [
          {
            ready: false,
            restartCount: 3,
            state: {
              waiting: { reason: 'ErrImageNeverPull', message: 'image is not present' },
            },
          },
        ],
      },
    })
    assert.equal(
      text,
      'Pod coredns-abc: phase Pending, Ready False, container waiting (ErrImageNeverPull: image is not present), 3 restarts'
    )
  })

  it('says what is unknown for a Pod the kubelet has not reported yet', () => {
    assert.equal(
      describeDnsPod({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'coredns-abc' } }),
      'Pod coredns-abc: phase unknown, Ready unknown'
    )
  })
})
