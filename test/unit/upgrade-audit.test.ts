// The upgrade test's audit reading (test/support/upgrade-audit.ts) on a hand-written log: writes
// are attributed to the Pod that had their source address at their time, and a change of writer
// without a new leadership in between is found.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { doubleWriters } from '../support/audit-writers.js'
import { engineWrites } from '../support/upgrade-audit.js'

const dir = mkdtempSync(join(tmpdir(), 'metactl-upgrade-audit-'))

interface Line {
  readonly ip: string
  readonly name: string
  readonly at: string
  readonly agent?: string
  readonly namespace?: string
}

function log(lines: readonly Line[]): string {
  const path = join(dir, `audit-${String(Math.random()).slice(2)}.log`)
  const events = lines.map((l) =>
    JSON.stringify({
      verb: 'update',
      userAgent: l.agent ?? 'metacontroller-ts',
      sourceIPs: [l.ip],
      objectRef: { resource: 'configmaps', namespace: l.namespace ?? 'ns', name: l.name },
      requestReceivedTimestamp: `2026-12-06T04:00:${l.at}Z`,
      stageTimestamp: `2026-12-06T04:00:${l.at}Z`,
      responseStatus: { code: 200 },
    })
  )
  writeFileSync(path, `${events.join('\n')}\n`)
  return path
}

const at = (seconds: string): number => Date.parse(`2026-12-06T04:00:${seconds}Z`)

describe('upgrade audit attribution', () => {
  after(() => {
    rmSync(dir, { recursive: true, force: true })
  })

  it('names the Pod that had the address at the time, and counts writes from no Pod', () => {
    // 10.0.0.5 was pod a until it went; later it is pod c's.
    const podAt = (ip: string, ms: number): string | undefined =>
      ip === '10.0.0.5' ? (ms < at('30.000000') ? 'a' : 'c') : ip === '10.0.0.6' ? 'b' : undefined
    const path = log([
      { ip: '10.0.0.5', name: 'p1.0', at: '10.000001' },
      { ip: '10.0.0.6', name: 'p1.1', at: '20.000000' },
      { ip: '10.0.0.5', name: 'p2.0', at: '40.000000' },
      { ip: '127.0.0.1', name: 'p3.0', at: '41.000000' },
      { ip: '10.0.0.6', name: 'p4.0', at: '42.000000', agent: 'kubectl' },
      { ip: '10.0.0.6', name: 'p5.0', at: '43.000000', namespace: 'other' },
    ])
    const { writes, unattributed } = engineWrites(path, 'ns', ['configmaps'], podAt)
    assert.deepEqual(
      writes.map((w) => `${w.parent} ${w.replica}`),
      ['p1 a', 'p1 b', 'p2 c']
    )
    assert.equal(unattributed, 1)
  })

  it('finds a change of writer with no leadership taken in between', () => {
    const podAt = (ip: string): string => (ip === '10.0.0.5' ? 'a' : 'b')
    const path = log([
      { ip: '10.0.0.5', name: 'p1.0', at: '10.000000' },
      { ip: '10.0.0.6', name: 'p1.0', at: '12.000000' },
      { ip: '10.0.0.5', name: 'p2.0', at: '20.000000' },
      { ip: '10.0.0.6', name: 'p2.0', at: '22.000000' },
    ])
    const { writes } = engineWrites(path, 'ns', ['configmaps'], podAt)
    // b took the lease at :21, between a's and b's writes of p2 but not of p1.
    const doubles = doubleWriters(writes, new Map([['b', [at('21.000000')]]]))
    assert.deepEqual(
      doubles.map((d) => `${d.parent} ${d.from.replica}->${d.to.replica}`),
      ['p1 a->b']
    )
  })
})
