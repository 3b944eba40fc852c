import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import { waitForNoLiveHolder } from './writer-handover.js'

function lease(holder: string, version: string): KubeObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'metacontroller', namespace: 'mc', resourceVersion: version },
    spec: { holderIdentity: holder, leaseDurationSeconds: 15 },
  }
}

/** Runs the wait over a scripted sequence of reads, 2 s of local clock per round. */
async function rounds(script: (round: number) => readonly KubeObject[]) {
  let round = 0
  const waits: string[][] = []
  await waitForNoLiveHolder({
    read: () => Promise.resolve(script(round++)),
    retryPeriodMs: 1,
    signal: new AbortController().signal,
    now: () => round * 2000,
    onWait: (holders) => waits.push([...holders]),
  })
  return { rounds: round, waits }
}

describe('waitForNoLiveHolder', () => {
  it('waits while the leader renews and goes on as soon as it released the Lease', async () => {
    const { rounds: n, waits } = await rounds((r) =>
      r < 3 ? [lease('leader-a', String(r))] : [lease('', String(r))]
    )
    assert.equal(n, 4)
    assert.deepEqual(waits, [['leader-a'], ['leader-a'], ['leader-a']])
  })

  it('takes a Lease that stopped changing for its duration as dead, on its own clock', async () => {
    const { rounds: n } = await rounds(() => [lease('crashed', '7')])
    // First seen at round 1 (2 s); dead once 15 s passed: at round 9 (18 s).
    assert.equal(n, 9)
  })

  it('does not wait when there is no Lease', async () => {
    assert.equal((await rounds(() => [])).rounds, 1)
  })

  it('stops waiting when its signal aborts', async () => {
    const stop = new AbortController()
    let reads = 0
    await waitForNoLiveHolder({
      read: () => {
        if (++reads === 2) stop.abort()
        return Promise.resolve([lease('leader', String(reads))])
      },
      retryPeriodMs: 1,
      signal: stop.signal,
    })
    assert.equal(reads, 2)
  })
})
