// Sharding on an API server without the ShardedListAndWatch feature gate: the server ignores
// the shard selector, every replica notices it from the first object outside its ranges, says so
// once, filters on the client, and the ring still gives every parent exactly one writer.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startShardingWorld } from '../support/sharding-world.js'
import type { ShardingWorld } from '../support/sharding-world.js'

const PARENTS = 60

describe('sharding with the ShardedListAndWatch gate off', () => {
  let w: ShardingWorld

  before(async () => {
    w = await startShardingWorld({ gate: false, parents: PARENTS })
  })

  after(async () => {
    await w.stop()
  })

  it('falls back to client-side filtering, once per replica, with one writer per parent', async () => {
    const r1 = w.start('r1')
    await w.waitRing(['r1'])
    await w.createParents()
    await w.waitConverged(1)
    const rolling = w.rollout(2)
    const r2 = w.start('r2')
    await rolling
    await w.waitRing(['r1', 'r2'])
    await w.waitConverged(2)
    await w.rollout(3)
    await w.waitConverged(3)

    const perReplica = w.assertOneWriter()
    for (const id of ['r1', 'r2'])
      assert.ok((perReplica.get(id)?.size ?? 0) > 0, `${id} wrote no parent`)
    for (const engine of [r1, r2]) {
      const said = engine.lines.filter((l) =>
        String(l['msg']).includes('ignored the shard selector')
      )
      assert.equal(said.length, 1, 'the fallback is logged once per collection')
      assert.equal(await w.metric(engine, 'metacontroller_shard_server_side_fallbacks_total'), 1)
      // Filtered on the client: the cache holds every parent.
      assert.equal(
        await w.metric(engine, 'metacontroller_shard_cached_objects', w.parentCrd.ref.resource),
        PARENTS
      )
    }
  })
})
