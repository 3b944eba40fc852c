// The audit checks of the in-cluster fault tests must catch what they claim to catch.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import type { EngineWrite } from '../support/fault-audit.js'
import {
  doubleWrites,
  readEngineWrites,
  writerRuns,
  writesBetween,
} from '../support/fault-audit.js'
import { cutRules } from '../support/fault-netfilter.js'
import { podOfIdentity } from '../support/fault-engine.js'

const write = (ip: string, at: number, done = at + 5): EngineWrite => ({
  ip,
  verb: 'update',
  resource: 'configmaps',
  name: 'p-00.0',
  receivedMs: at,
  completedMs: done,
  code: 200,
})

describe('doubleWrites', () => {
  it('accepts one handover after the old writer’s last write was done', () => {
    const writes = [write('a', 0), write('a', 10), write('b', 100)]
    assert.deepEqual(doubleWrites(writes), [])
    assert.deepEqual(
      writerRuns(writes).map((r) => [r.ip, r.writes]),
      [
        ['a', 2],
        ['b', 1],
      ]
    )
  })

  it('flags a replica that writes again after another took over', () => {
    const found = doubleWrites([write('a', 0), write('b', 100), write('a', 200)])
    assert.equal(found.length, 1)
    assert.match(found[0] ?? '', /^a wrote again/)
  })

  it('flags a new writer received before the old one’s last response was done', () => {
    const found = doubleWrites([write('a', 0, 150), write('b', 100)])
    assert.equal(found.length, 1)
    assert.match(found[0] ?? '', /before a's last write was done/)
  })

  it('keeps the window’s writes only', () => {
    const writes = [write('a', 0), write('a', 50), write('b', 100)]
    assert.deepEqual(
      writesBetween(writes, 10, 100).map((w) => w.receivedMs),
      [50, 100]
    )
  })
})

describe('readEngineWrites', () => {
  it('keeps the engine’s writes in the namespace, by source IP, with microseconds', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fault-audit-'))
    try {
      const event = (agent: string, namespace: string, received: string) =>
        JSON.stringify({
          verb: 'update',
          userAgent: agent,
          sourceIPs: ['10.244.0.7'],
          objectRef: { resource: 'faultparents', subresource: 'status', namespace, name: 'p-01' },
          requestReceivedTimestamp: received,
          stageTimestamp: '2026-01-01T00:00:00.002500Z',
          responseStatus: { code: 200 },
        })
      const path = join(dir, 'audit.log')
      writeFileSync(
        path,
        [
          event('metactl-fault-load', 'faults', '2026-01-01T00:00:00.000100Z'),
          event('metacontroller-ts', 'other', '2026-01-01T00:00:00.000100Z'),
          event('metacontroller-ts', 'faults', '2026-01-01T00:00:00.001250Z'),
          '',
        ].join('\n')
      )
      const [only, ...rest] = readEngineWrites(path, 'faults')
      assert.equal(rest.length, 0)
      assert.ok(only)
      assert.equal(only.ip, '10.244.0.7')
      assert.equal(only.resource, 'faultparents/status')
      assert.equal(only.receivedMs, Date.parse('2026-01-01T00:00:00.001Z') + 0.25)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('fault helpers', () => {
  it('cuts both directions between the Pod and the API server’s port, and nothing else', () => {
    assert.deepEqual(cutRules('10.244.0.9', 6443), [
      ['INPUT', '-s', '10.244.0.9', '-p', 'tcp', '--dport', '6443', '-j', 'DROP'],
      ['OUTPUT', '-d', '10.244.0.9', '-p', 'tcp', '--sport', '6443', '-j', 'DROP'],
    ])
  })

  it('reads the Pod out of a leader-election identity', () => {
    assert.equal(podOfIdentity('metacontroller-7d9f_0b6e-41c2'), 'metacontroller-7d9f')
    assert.equal(podOfIdentity('plain'), 'plain')
  })
})
