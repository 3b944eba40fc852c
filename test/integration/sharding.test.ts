// Sharding between `metactl run` processes on the real control plane, with the API server's
// ShardedListAndWatch gate on (server-side sharded watches) and off (the replicas notice the
// ignored selector and filter on their side): parents spread over a ring of replicas that join,
// crash (SIGKILL), rejoin, lose their API connection and leave (SIGTERM) during rollouts, and
// the API server's audit log proves that no parent ever had two writers, no child was lost or
// created twice, and every parent converged after every rollout.
//
// 1,000 parents by default (about 2.5 min per gate on a loaded 2-core machine);
// METACTL_SHARDING_PARENTS=<n> runs another number, METACTL_SHARDING_KEEP_LOGS=1 keeps the
// replicas' logs, metrics and the audit log of a passing run too (a failing one always keeps them).
import assert from 'node:assert/strict'
import { after, before, describe } from 'node:test'
import { fnv1a64 } from '../../src/runtime/ring/fnv1a64.js'
import { HashRing } from '../../src/runtime/ring/hash-ring.js'
import { objectInRanges, shardSelector } from '../../src/runtime/ring/shard-selector.js'
import { scenarioSteps, startShardingWorld } from '../support/sharding-world.js'
import type { ShardingWorld } from '../support/sharding-world.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'

const PARENTS = Number(process.env['METACTL_SHARDING_PARENTS'] ?? '1000')

const FALLBACK = 'ignored the shard selector'

for (const gate of [true, false]) {
  describe(`sharding, gate ShardedListAndWatch ${gate ? 'on' : 'off'}: rollouts of ${PARENTS} parents`, () => {
    let w: ShardingWorld
    const step = scenarioSteps()
    let cutR3: () => void = () => undefined
    const replica = (identity: string): SpawnedEngine => {
      const engine = w.engines.get(identity)
      assert.ok(engine, `${identity} was started`)
      return engine
    }

    before(async () => {
      w = await startShardingWorld({ gate, parents: PARENTS })
    })

    after(async () => {
      console.log(`converged after each rollout: ${w.timings.join(' ')}`)
      await w.stop()
    })

    step('converges the parents created with one replica', async () => {
      w.start('r1')
      await w.waitRing(['r1'])
      await w.createParents()
      await w.waitConverged(1)
    })

    step('converges a rollout while two replicas join', async () => {
      const rolling = w.rollout(2)
      w.start('r2')
      cutR3 = (await w.startBehindProxy('r3')).cut
      await rolling
      await w.waitRing(['r1', 'r2', 'r3'])
      await w.waitConverged(2)
    })

    step('converges a rollout while a replica is SIGKILLed (its Lease expires)', async () => {
      const rolling = w.rollout(3)
      w.engines.get('r2')?.kill()
      await rolling
      await w.waitRing(['r1', 'r3'])
      await w.waitConverged(3)
    })

    step('converges a rollout while the killed replica restarts under its identity', async () => {
      const rolling = w.rollout(4)
      w.start('r2')
      await rolling
      await w.waitRing(['r1', 'r2', 'r3'])
      await w.waitConverged(4)
    })

    step('converges a rollout while a replica loses its API connection', async () => {
      const rolling = w.rollout(5)
      cutR3()
      await rolling
      // r3 cannot renew: it stops writing at its renew deadline and exits 1; the others agree a
      // ring without it once its Lease has not changed for the lease duration.
      assert.equal(await w.exitOf('r3'), 1)
      await w.waitRing(['r1', 'r2'])
      await w.waitConverged(5)
      // Every parent's last status write came from its owner on the ring without r3.
      const parents = await w.plane.client.list(w.parentCrd.ref, { namespace: w.ns })
      const uidOf = new Map(parents.items.map((p) => [p.metadata.name, p.metadata.uid ?? '']))
      const lastWriter = new Map(
        w
          .writes()
          .filter((x) => x.resource === w.parentCrd.ref.resource)
          .map((x) => [x.parent, x.replica])
      )
      const ring = new HashRing(['r1', 'r2'])
      const wrong = [...lastWriter].filter(
        ([name, replica]) => ring.ownerOf(fnv1a64(uidOf.get(name) ?? '')) !== replica
      )
      assert.deepEqual(wrong.slice(0, 5), [], `${wrong.length} parents last written by a non-owner`)
      assert.equal(lastWriter.size, PARENTS)
    })

    step('converges a rollout while a replica gets SIGTERM, drains and leaves', async () => {
      const rolling = w.rollout(6)
      const left = w.leave('r2')
      await rolling
      assert.equal(await left, 0)
      await w.waitRing(['r1'])
      await w.waitConverged(6)
    })

    step('had one writer per parent throughout, and lost or duplicated no child', () => {
      const perReplica = w.assertOneWriter()
      w.assertNoChildLostOrDuplicated()
      for (const id of ['r1', 'r2', 'r3'])
        assert.ok((perReplica.get(id)?.size ?? 0) > 0, `${id} wrote no parent`)
      const shares = [...perReplica].map(([id, parents]) => `${id}=${parents.size}`).join(' ')
      console.log(`writes ${w.writes().length}; parents written per replica: ${shares}`)
    })

    step(
      'counts what a replica received from its sharded watches, in objects and bytes',
      async () => {
        const r1 = replica('r1')
        const resource = w.parentCrd.ref.resource
        const objects = await w.metric(r1, 'metacontroller_shard_received_objects_total', resource)
        const bytes = await w.metric(r1, 'metacontroller_shard_received_bytes_total', resource)
        assert.ok(objects > 0, `${resource}: no object received`)
        // A parent's JSON is well over 100 bytes; the count is of whole response bodies.
        assert.ok(bytes > objects * 100, `${resource}: ${bytes} bytes for ${objects} objects`)
      }
    )

    if (gate) {
      step('was served only its ranges: no replica saw the selector ignored', async () => {
        const fallbacks = w.replicas.flatMap(({ engine }) =>
          engine.lines.filter((l) => String(l['msg']).includes(FALLBACK))
        )
        assert.deepEqual(fallbacks, [])
        assert.equal(
          await w.metric(replica('r1'), 'metacontroller_shard_server_side_fallbacks_total'),
          0
        )
      })

      step(
        'splits parents exactly as the API server’s shardSelector does, by uid and by namespace',
        async () => {
          const all = await w.plane.client.list(w.parentCrd.ref, { namespace: w.ns })
          assert.equal(all.items.length, PARENTS)
          const ring = new HashRing(['r1', 'r2', 'r3'])
          for (const field of ['uid', 'namespace'] as const) {
            let total = 0
            for (const member of ring.members) {
              const ranges = ring.rangesOf(member)
              const served = await w.plane.client.list(w.parentCrd.ref, {
                namespace: w.ns,
                shardSelector: shardSelector(field, ranges) ?? '',
              })
              const ours = all.items.filter((p) => objectInRanges(field, p.metadata, ranges))
              assert.deepEqual(
                served.items.map((p) => p.metadata.name).sort(),
                ours.map((p) => p.metadata.name).sort(),
                `${field} ranges of ${member}`
              )
              total += served.items.length
            }
            assert.equal(total, PARENTS, `every parent in exactly one ${field} share`)
          }
        }
      )
    } else {
      step('fell back to client-side filtering, said once per replica process', async () => {
        for (const { name, engine } of w.replicas) {
          const said = engine.lines.filter((l) => String(l['msg']).includes(FALLBACK))
          assert.equal(said.length, 1, `${name}: the fallback is logged once per collection`)
        }
        const r1 = replica('r1')
        assert.equal(await w.metric(r1, 'metacontroller_shard_server_side_fallbacks_total'), 1)
        // Filtered on the client: the cache holds every parent.
        assert.equal(
          await w.metric(r1, 'metacontroller_shard_cached_objects', w.parentCrd.ref.resource),
          PARENTS
        )
      })
    }
  })
}
