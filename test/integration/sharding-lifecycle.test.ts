// Rolling updates and finalizers carry on across handoffs between `metactl run --sharding`
// replicas on the real control plane, with the API server's ShardedListAndWatch gate on and off
// (server-side sharded watches, or the replicas' own filtering): each parent has two children
// rolled out one at a time (`RollingInPlace`) and a finalize hook. A rollout continues while a
// replica leaves with SIGTERM and while one is SIGKILLed; deleting every parent while a replica
// leaves runs each parent's finalize hook and lets every parent go. The audit log shows one
// writer per parent throughout and every child created once, deleted only by the finalizers.
//
// 200 parents by default; METACTL_SHARDING_LIFECYCLE_PARENTS=<n> runs another number.
import assert from 'node:assert/strict'
import { after, before, describe } from 'node:test'
import { scenarioSteps, startShardingWorld } from '../support/sharding-world.js'
import type { ShardingWorld } from '../support/sharding-world.js'

const PARENTS = Number(process.env['METACTL_SHARDING_LIFECYCLE_PARENTS'] ?? '200')

for (const gate of [true, false]) {
  describe(`sharding, gate ShardedListAndWatch ${gate ? 'on' : 'off'}: rolling updates and finalizers of ${PARENTS} parents across handoffs`, () => {
    let w: ShardingWorld
    const step = scenarioSteps()

    before(async () => {
      w = await startShardingWorld({ gate, parents: PARENTS, lifecycle: true })
    })

    after(async () => {
      console.log(`converged after each step: ${w.timings.join(' ')}`)
      await w.stop()
    })

    step('converges the parents and both children of each on a ring of two', async () => {
      w.start('r1')
      w.start('r2')
      await w.waitRing(['r1', 'r2'])
      await w.createParents()
      await w.waitConverged(1)
    })

    step('finishes a rolling update while a replica gets SIGTERM and leaves', async () => {
      const rolling = w.rollout(2)
      const left = w.leave('r2')
      await rolling
      assert.equal(await left, 0)
      await w.waitRing(['r1'])
      await w.waitConverged(2)
    })

    step('finishes a rolling update while a replica is SIGKILLed', async () => {
      w.start('r2')
      await w.waitRing(['r1', 'r2'])
      const rolling = w.rollout(3)
      w.engines.get('r1')?.kill()
      await rolling
      await w.waitRing(['r2'])
      await w.waitConverged(3)
    })

    step('had one writer per parent, and each child was created once and never deleted', () => {
      const perReplica = w.assertOneWriter()
      w.assertNoChildLostOrDuplicated()
      for (const id of ['r1', 'r2'])
        assert.ok((perReplica.get(id)?.size ?? 0) > 0, `${id} wrote no parent`)
    })

    step('finalizes and deletes every parent while a replica leaves', async () => {
      w.start('r1')
      await w.waitRing(['r1', 'r2'])
      await w.deleteParents()
      assert.equal(await w.leave('r2'), 0)
      await w.waitGone()
      const finalized = w.finalized()
      const missing = Array.from({ length: PARENTS }, (_, i) => `p${i}`).filter(
        (name) => !finalized.has(name)
      )
      assert.deepEqual(missing.slice(0, 5), [], `${missing.length} parents never finalized`)
      w.assertOneWriter()
    })
  })
}
