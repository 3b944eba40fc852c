// Children follow their parent's shard with the uid key, on the real control plane: three
// `metactl run --sharding` replicas (the default `--shard-key=uid`) each receive and hold at most
// 1/3 + 10 % of the children, counted through their shard metrics, with the API server's
// ShardedListAndWatch gate on and off (the children's label selector needs no gate); every child
// carries its parent's shard bucket; when a replica is SIGKILLed its parents' children are taken
// over by the new owners, and the audit log shows one writer per parent and no child lost or
// created twice.
//
// 600 parents × 2 children by default (few parents spread unevenly over the buckets);
// METACTL_SHARDING_PARENTS=<n> runs another number.
import assert from 'node:assert/strict'
import { after, before, describe } from 'node:test'
import { shardBucketOf } from '../../src/runtime/ring/shard-bucket.js'
import { SHARD_BUCKET_LABEL } from '../../src/engine/sharding/bucketed-child-watcher.js'
import { Informer } from '../../src/runtime/informers/informer.js'
import { dynamicListWatcher } from '../../src/runtime/informers/list-watcher.js'
import { scenarioSteps, startShardingWorld } from '../support/sharding-world.js'
import type { ShardingWorld } from '../support/sharding-world.js'

const PARENTS = Number(process.env['METACTL_SHARDING_PARENTS'] ?? '600')
const CHILDREN = PARENTS * 2
/** The most children a replica of three may receive or hold: 1/3 + 10 % of them. */
const SHARE = 1 / 3 + 0.1

for (const gate of [true, false]) {
  describe(`children by shard bucket, gate ShardedListAndWatch ${gate ? 'on' : 'off'}`, () => {
    let w: ShardingWorld
    const step = scenarioSteps()
    /** Every child event a whole watch of the collection saw: what one replica got before. */
    let whole = 0
    let wholeWatch: Informer | undefined

    before(async () => {
      w = await startShardingWorld({ gate, parents: PARENTS, lifecycle: true })
    })

    after(async () => {
      await wholeWatch?.stop()
      await w.stop()
    })

    step('converges the parents with three replicas', async () => {
      for (const id of ['r1', 'r2', 'r3']) w.start(id)
      await w.waitRing(['r1', 'r2', 'r3'])
      wholeWatch = new Informer(
        dynamicListWatcher(w.plane.client, w.childCrd.ref, { namespace: w.ns })
      )
      const count = (): void => {
        whole++
      }
      wholeWatch.subscribe({ onAdd: count, onUpdate: count, onDelete: count })
      wholeWatch.start()
      await w.createParents()
      await w.waitConverged(1)
    })

    step('labels every child with its parent’s shard bucket', async () => {
      const parents = await w.plane.client.list(w.parentCrd.ref, { namespace: w.ns })
      const uids = new Set(parents.items.map((p) => p.metadata.uid ?? ''))
      const children = await w.plane.client.list(w.childCrd.ref, { namespace: w.ns })
      assert.equal(children.items.length, CHILDREN)
      for (const child of children.items) {
        const owner = child.metadata.ownerReferences?.find((r) => r.controller === true)
        assert.ok(owner !== undefined && uids.has(owner.uid), `${child.metadata.name}: no parent`)
        assert.equal(
          child.metadata.labels?.[SHARD_BUCKET_LABEL],
          String(shardBucketOf(owner.uid)),
          `${child.metadata.name}: its parent's bucket`
        )
      }
    })

    step('has each replica receive and hold at most 1/3 + 10 % of the children', async () => {
      const resource = w.childCrd.ref.resource
      const counts: string[] = []
      for (const id of ['r1', 'r2', 'r3']) {
        const engine = w.engines.get(id)
        assert.ok(engine, `${id} runs`)
        const held = await w.metric(engine, 'metacontroller_shard_cached_objects', resource)
        const received = await w.metric(
          engine,
          'metacontroller_shard_received_objects_total',
          resource
        )
        counts.push(`${id}: held ${held}, received ${received}`)
        console.log(`${id}: held ${held} of ${CHILDREN}, received ${received} of ${whole}`)
        assert.ok(held > 0, `${id} holds no child`)
        assert.ok(held <= CHILDREN * SHARE, `${id} holds ${held} of ${CHILDREN} children`)
        assert.ok(received <= whole * SHARE, `${id} received ${received} of ${whole} events`)
      }
      console.log(`${CHILDREN} children, ${whole} events in all: ${counts.join('; ')}`)
    })

    step('hands a killed replica’s children to the new owners', async () => {
      const rolling = w.rollout(2)
      w.engines.get('r2')?.kill()
      await rolling
      await w.waitRing(['r1', 'r3'])
      await w.waitConverged(2)
      const resource = w.childCrd.ref.resource
      let held = 0
      for (const id of ['r1', 'r3']) {
        const engine = w.engines.get(id)
        assert.ok(engine, `${id} runs`)
        held += await w.metric(engine, 'metacontroller_shard_cached_objects', resource)
      }
      assert.ok(held >= CHILDREN, `the two replicas hold ${held} of ${CHILDREN} children`)
    })

    step('had one writer per parent, and lost or duplicated no child', () => {
      w.assertOneWriter()
      w.assertNoChildLostOrDuplicated()
    })
  })
}
