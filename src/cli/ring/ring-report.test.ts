import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import { viewId } from '../../runtime/ring/member-table.js'
import { formatRingReport, ownerLine, ringReport } from './ring-report.js'

const NOW = Date.parse('2026-12-03T12:00:00Z')

function lease(identity: string, renewedAgoMs: number, view: string, released = false): KubeObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: `ring-${identity}`,
      annotations: {
        'metacontroller.io/ring-member': identity,
        'metacontroller.io/ring-view': view,
      },
    },
    spec: {
      holderIdentity: released ? '' : identity,
      leaseDurationSeconds: 15,
      renewTime: new Date(NOW - renewedAgoMs).toISOString(),
    },
  }
}

describe('ringReport', () => {
  it('tells live, expired and released members apart and sees an agreed ring', () => {
    const agreed = viewId(['a', 'b'])
    const report = ringReport(
      [
        lease('b', 1000, agreed),
        lease('a', 2000, agreed),
        lease('c', 60_000, 'x'),
        lease('d', 0, '', true),
      ],
      NOW
    )
    assert.deepEqual(
      report.members.map((m) => `${m.identity}:${m.state}`),
      ['a:live', 'b:live', 'c:expired', 'd:released']
    )
    assert.equal(report.agreed, true)
    assert.deepEqual(report.ring.members, ['a', 'b'])
    const lines = formatRingReport('ring', 'mc', report)
    assert.match(lines[0] ?? '', /2 live members, agreed on ring/)
  })

  it('reports a handoff in progress while a live member announced another ring', () => {
    const report = ringReport(
      [lease('a', 0, viewId(['a', 'b'])), lease('b', 0, viewId(['b']))],
      NOW
    )
    assert.equal(report.agreed, false)
    assert.match(formatRingReport('r', 'mc', report)[0] ?? '', /handoff in progress/)
  })

  it('names the owner of a parent by its uid', () => {
    const report = ringReport([lease('a', 0, ''), lease('b', 0, '')], NOW)
    const parent: KubeObject = {
      apiVersion: 'v1',
      kind: 'PodService',
      metadata: { name: 'web', namespace: 'ns', uid: 'u-1' },
    }
    const line = ownerLine(parent, 'uid', report.ring)
    assert.match(line, new RegExp(`owned by ${report.ring.ownerOfValue('u-1') ?? '?'}$`))
    assert.match(line, /^PodService ns\/web: uid u-1 hashes to 0x[0-9a-f]{16}/)
  })
})
