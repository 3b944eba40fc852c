// Moving from leader election to a ring without two writers: a `--sharding` replica started while
// a `--leader-election` leader serves the parents waits for the leader's Lease; the leader gets
// SIGTERM (as a rolling update does), drains and releases it; the ring forms and takes over.
// The audit log shows the leader's last write completed before the ring replica served a ring,
// and every parent converged on both sides of the switch.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { readAuditWrites } from '../support/audit-writers.js'
import { spawnEngine } from '../support/spawned-engine.js'
import { startShardingWorld } from '../support/sharding-world.js'
import type { ShardingWorld } from '../support/sharding-world.js'

const PARENTS = 40

describe('sharding: moving from leader election to a ring', () => {
  let w: ShardingWorld

  before(async () => {
    w = await startShardingWorld({ gate: true, parents: PARENTS })
  })

  after(async () => {
    await w.stop()
  })

  it('starts serving only after the leader released its Lease, with no write of both at once', async () => {
    const leader = spawnEngine(w.plane.kubeconfigPath, [
      '--leader-election',
      '--leader-election-namespace',
      w.ns,
      '--leader-election-lease-duration',
      '8s',
      '--leader-election-renew-deadline',
      '6s',
      '--leader-election-retry-period',
      '1s',
      '--discovery-interval',
      '2s',
    ])
    try {
      await leader.line('Successfully acquired lease')
      await w.createParents()
      await w.waitConverged(1)

      const ring = w.start('r1')
      const waiting = await ring.line(
        'waiting for the leader-election Lease to be released before joining the ring'
      )
      await w.rollout(2)
      await w.waitConverged(2)
      assert.equal(w.ringOf(ring).length, 0, 'the ring replica served while the leader led')

      // The rolling update terminates the old leader: it drains, releases, exits.
      leader.process.kill('SIGTERM')
      assert.equal(await leader.exited, 0)
      await w.waitRing(['r1'])
      await w.rollout(3)
      await w.waitConverged(3)

      const served = ring.lines.find((l) => l['msg'] === 'serving a ring')
      const servedMs = Number(served?.['ts']) * 1000
      const writes = readAuditWrites(
        w.auditLog,
        w.ns,
        [w.parentCrd.ref.resource, w.childCrd.ref.resource],
        'metacontroller-ts'
      )
      // The test's own client shares the bare user agent: its parent creates and patches are
      // not the leader's (the engine writes parents only through their status).
      const byLeader = writes.filter(
        (x) =>
          x.replica === '' &&
          !(x.resource === w.parentCrd.ref.resource && ['create', 'patch'].includes(x.verb))
      )
      const byRing = writes.filter((x) => x.replica === '/r1')
      assert.ok(byLeader.length > 0 && byRing.length > 0, 'both wrote parents')
      const leaderLast = Math.max(...byLeader.map((x) => x.completedMs))
      const ringFirst = Math.min(...byRing.map((x) => x.receivedMs))
      assert.ok(
        Number(waiting['ts']) * 1000 < leaderLast,
        'the ring replica waited while the leader wrote'
      )
      const late = byLeader.filter((x) => x.completedMs > servedMs + 1)
      assert.deepEqual(
        late.map(
          (x) => `${x.verb} ${x.resource}/${x.parent} +${(x.completedMs - servedMs).toFixed(0)} ms`
        ),
        [],
        `the leader wrote after the ring replica served; leader log: ${JSON.stringify(leader.lines.slice(-8))}`
      )
      assert.ok(servedMs <= ringFirst + 1, 'the ring replica wrote before it served a ring')
      console.log(
        `leader's last write → ring served: ${(servedMs - leaderLast).toFixed(0)} ms; ` +
          `converged: ${w.timings.join(' ')}`
      )
    } finally {
      leader.kill()
    }
  })
})
