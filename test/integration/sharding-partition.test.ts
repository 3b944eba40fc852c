// A ring of three replicas serving many parents (1,000 with METACTL_SHARDING_PARENTS=1000; 300 in
// CI to keep the tier short) when one replica loses the API server during a rollout: its Lease
// expires, its parents move to the others, it stops writing and exits, and the audit log shows
// one writer per parent throughout and every parent finally written by its owner on the ring.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { fnv1a64 } from '../../src/runtime/sharding/fnv1a64.js'
import { HashRing } from '../../src/runtime/sharding/hash-ring.js'
import { readAuditWrites } from '../support/audit-writers.js'
import { startShardingWorld } from '../support/sharding-world.js'
import type { ShardingWorld } from '../support/sharding-world.js'

const PARENTS = Number(process.env['METACTL_SHARDING_PARENTS'] ?? '300')

describe(`sharding: a network partition during a rollout of ${PARENTS} parents`, () => {
  let w: ShardingWorld

  before(async () => {
    w = await startShardingWorld({ gate: true, parents: PARENTS })
  })

  after(async () => {
    await w.stop()
  })

  it('moves the cut-off replica’s parents to the others with one writer per parent', async () => {
    const began = Date.now()
    w.start('r1')
    w.start('r2')
    const cutOff = await w.startBehindProxy('r3')
    await w.waitRing(['r1', 'r2', 'r3'])
    await w.createParents()
    await w.waitConverged(1, 300_000)
    const before = w.assertOneWriter()
    assert.ok((before.get('r3')?.size ?? 0) > 0, 'r3 wrote no parent before the partition')

    const rolling = w.rollout(2)
    cutOff.cut()
    await rolling
    // r3 cannot renew: it stops writing at its renew deadline and exits 1; the others agree a
    // ring without it once its Lease has not changed for the lease duration.
    assert.equal(await cutOff.engine.exited, 1)
    await w.waitRing(['r1', 'r2'])
    await w.waitConverged(2, 300_000)
    const stoppedAt = Date.now()

    const perReplica = w.assertOneWriter()
    const ring = new HashRing(['r1', 'r2'])
    // Every parent's last write of the rollout came from its owner on the final ring.
    const writes = readAuditWrites(
      w.auditLog,
      w.ns,
      [w.parentCrd.ref.resource],
      'metacontroller-ts/'
    )
    const parents = await w.plane.client.list(w.parentCrd.ref, { namespace: w.ns })
    const uidOf = new Map(parents.items.map((p) => [p.metadata.name, p.metadata.uid ?? '']))
    const lastWriter = new Map(writes.map((x) => [x.parent, x.replica]))
    const wrong = [...lastWriter].filter(
      ([name, replica]) => ring.ownerOf(fnv1a64(uidOf.get(name) ?? '')) !== replica
    )
    assert.deepEqual(wrong.slice(0, 5), [], `${wrong.length} parents last written by a non-owner`)
    assert.equal(lastWriter.size, PARENTS)
    const fallbacks = [...w.engines.values()].flatMap((e) =>
      e.lines.filter((l) => String(l['msg']).includes('ignored the shard selector'))
    )
    assert.deepEqual(fallbacks, [], 'the API server honoured the shard selector')
    const shares = [...perReplica].map(([id, p]) => `${id}=${p.size}`).join(' ')
    console.log(`parents written per replica: ${shares}; converged: ${w.timings.join(' ')}`)
    console.log(`test body took ${((stoppedAt - began) / 1000).toFixed(1)}s`)
  })
})
