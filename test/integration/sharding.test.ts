// Sharding between `metactl run` processes on the real control plane: parents spread over a ring
// of replicas that join, leave (SIGTERM), crash (SIGKILL) and rejoin during rollouts, with the API
// server's audit log proving that no parent ever had two writers and every parent converged.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import { isJsonObject } from '../../src/core/kube-object.js'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { HashRing } from '../../src/runtime/sharding/hash-ring.js'
import { objectInRanges, shardSelector } from '../../src/runtime/sharding/shard-selector.js'
import { doubleWriters, readAuditWrites } from '../support/audit-writers.js'
import {
  CCS,
  isolatedComposite,
  METACONTROLLER_CRDS,
  NAMESPACES,
  serveHook,
} from '../support/engine-fixture.js'
import type { ServedHook } from '../support/engine-fixture.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'

const world = isolatedComposite('ShParent', 'ShChild')
const { parentCrd, childCrd } = world
const PARENTS = 100

/** A log line's time in ms: zap's `ts` (epoch seconds by default), or an ISO `time`. */
function logTimeMs(line: Record<string, unknown>): number {
  const ts = line['ts']
  if (typeof ts === 'number') return ts * 1000
  return Date.parse(String(ts ?? line['time']))
}

describe('sharding', () => {
  let plane: ControlPlane
  let hook: ServedHook
  const dir = mkdtempSync(join(tmpdir(), 'metactl-sharding-'))
  const auditLog = join(dir, 'audit.log')
  const ns = `sh-${Date.now().toString(36)}`
  const engines = new Map<string, SpawnedEngine>()
  const start = (identity: string): SpawnedEngine => {
    const engine = spawnEngine(plane.kubeconfigPath, [
      '--sharding',
      '--sharding-namespace',
      ns,
      '--sharding-ring',
      ns,
      '--sharding-identity',
      identity,
      // Short enough for a quick test, long enough for a loaded 2-core machine's renewals.
      '--sharding-lease-duration',
      '8s',
      '--sharding-renew-deadline',
      '6s',
      '--sharding-retry-period',
      '1s',
      '--discovery-interval',
      '2s',
    ])
    engines.set(identity, engine)
    return engine
  }
  const value = (object: KubeObject | undefined, path: 'spec' | 'status'): unknown => {
    const part = object?.[path]
    return isJsonObject(part) ? part['v'] : undefined
  }
  /** Bumps every parent's `spec.v`: a rollout the replicas must all carry out. */
  const rollout = async (v: number): Promise<void> => {
    rolloutStarted = Date.now()
    await Promise.all(
      Array.from({ length: PARENTS }, (_, i) =>
        plane.client.patch(
          parentCrd.ref,
          `p${i}`,
          { spec: { v } },
          { namespace: ns, type: 'merge' }
        )
      )
    )
  }
  /** Every parent has status v and exactly one child, at v. */
  const converged = async (v: number): Promise<boolean> => {
    const parents = await plane.client.list(parentCrd.ref, { namespace: ns })
    const children = await plane.client.list(childCrd.ref, { namespace: ns })
    const atV = children.items.filter((c) => c.metadata.labels?.['v'] === String(v))
    return (
      parents.items.length === PARENTS &&
      parents.items.every((p) => value(p, 'status') === v) &&
      children.items.length === PARENTS &&
      atV.length === PARENTS
    )
  }
  /** Seconds each rollout took to converge, for the figures in docs/deploy.md. */
  const timings: string[] = []
  let rolloutStarted = Date.now()
  const waitConverged = async (v: number, timeoutMs = 60_000): Promise<boolean> => {
    const done = await waitFor(async () => ((await converged(v)) ? true : undefined), {
      timeoutMs,
      intervalMs: 250,
      description: `every parent converged at v=${v}`,
    })
    timings.push(`v${v}=${((Date.now() - rolloutStarted) / 1000).toFixed(1)}s`)
    return done
  }
  /** Members of the last ring a replica serves, from its log. */
  const ringOf = (engine: SpawnedEngine | undefined): string[] => {
    const served = engine?.lines.filter((l) => l['msg'] === 'serving a ring').at(-1)
    return (served?.['members'] as string[] | undefined) ?? []
  }
  const waitRing = (identities: readonly string[]): Promise<true> =>
    waitFor(
      () =>
        identities.every(
          (id) => JSON.stringify(ringOf(engines.get(id))) === JSON.stringify([...identities].sort())
        ) || undefined,
      { timeoutMs: 30_000, intervalMs: 100, description: `the ring ${identities.join(', ')}` }
    )

  before(async () => {
    plane = await startControlPlane({
      useExistingCluster: false,
      nodes: 0,
      auditLogPath: auditLog,
      // The replicas' parent watches are sharded by the API server (server-side); the gate also
      // lets the last test compare the ring's ranges with the server's own shard selection.
      // sharding-gate-off.test.ts covers the server that ignores the selector.
      featureGates: { ShardedListAndWatch: true },
      crds: [...METACONTROLLER_CRDS, parentCrd.crd, childCrd.crd],
    })
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    })
    hook = await serveHook((body) => {
      const { parent } = body as { parent: KubeObject }
      const name = parent.metadata.name ?? ''
      const v = String(value(parent, 'spec'))
      return {
        status: { v: value(parent, 'spec') },
        children: [
          {
            apiVersion: childCrd.apiVersion,
            kind: 'ShChild',
            metadata: { name, labels: { app: name, v } },
          },
        ],
      }
    })
    await plane.client.create(CCS, {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: ns },
      spec: world.ccSpec(hook.url, ns, {
        childResources: [
          {
            apiVersion: childCrd.apiVersion,
            resource: childCrd.ref.resource,
            updateStrategy: { method: 'InPlace' },
          },
        ],
      }),
    })
  })

  after(async () => {
    const debugDir = process.env['METACTL_SHARDING_DEBUG_DIR']
    if (debugDir !== undefined)
      for (const [id, engine] of engines)
        writeFileSync(
          join(debugDir, `${id}.log`),
          engine.lines.map((l) => JSON.stringify(l)).join('\n')
        )
    for (const engine of engines.values()) engine.kill()
    await Promise.all([...engines.values()].map((e) => e.exited))
    await hook.close()
    await plane.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('spreads parents over joining, leaving and crashing replicas with one writer per parent', async () => {
    const r1 = start('r1')
    await waitRing(['r1'])
    rolloutStarted = Date.now()
    await Promise.all(
      Array.from({ length: PARENTS }, (_, i) =>
        plane.client.create(parentCrd.ref, world.parentObject(`p${i}`, ns, { v: 1 }))
      )
    )
    await waitConverged(1)

    // Two replicas join during a rollout, then all three roll out.
    const rolling2 = rollout(2)
    start('r2')
    start('r3')
    await rolling2
    await waitRing(['r1', 'r2', 'r3'])
    await waitConverged(2)
    await rollout(3)
    await waitConverged(3)

    // One crashes during a rollout: its parents wait for its Lease to expire (8 s).
    const rolling4 = rollout(4)
    engines.get('r2')?.kill()
    await rolling4
    await waitRing(['r1', 'r3'])
    await waitConverged(4)

    // One is terminated during a rollout: it drains and leaves at once.
    const rolling5 = rollout(5)
    engines.get('r3')?.process.kill('SIGTERM')
    await rolling5
    assert.equal(await engines.get('r3')?.exited, 0)
    await waitRing(['r1'])
    await waitConverged(5)

    // A replica rejoins during a rollout, then both roll out.
    const rolling6 = rollout(6)
    start('r4')
    await rolling6
    await waitRing(['r1', 'r4'])
    await waitConverged(6)
    await rollout(7)
    await waitConverged(7)

    r1.process.kill('SIGTERM')
    engines.get('r4')?.process.kill('SIGTERM')
    await Promise.all([r1.exited, engines.get('r4')?.exited])

    const agreedAt = new Map(
      [...engines].map(([id, engine]) => [
        id,
        engine.lines.filter((l) => l['msg'] === 'serving a ring').map(logTimeMs),
      ])
    )
    const writes = readAuditWrites(
      auditLog,
      ns,
      [parentCrd.ref.resource, childCrd.ref.resource],
      'metacontroller-ts/'
    )
    const perReplica = new Map<string, Set<string>>()
    for (const w of writes) {
      const parents = perReplica.get(w.replica) ?? new Set()
      parents.add(w.parent)
      perReplica.set(w.replica, parents)
    }
    for (const id of ['r1', 'r2', 'r3', 'r4'])
      assert.ok((perReplica.get(id)?.size ?? 0) > 0, `${id} wrote no parent`)
    const doubles = doubleWriters(writes, agreedAt)
    assert.deepEqual(
      doubles.slice(0, 5).map((d) => `${d.parent}: ${d.from.replica} -> ${d.to.replica}`),
      [],
      `${doubles.length} changes of writer without a ring agreed in between`
    )
    const shares = [...perReplica].map(([id, parents]) => `${id}=${parents.size}`).join(' ')
    console.log(`writes ${writes.length}; parents written per replica: ${shares}`)
    console.log(`converged after each rollout: ${timings.join(' ')}`)
  })

  it('splits parents exactly as the API server’s shardSelector does, by uid and by namespace', async () => {
    const all = await plane.client.list(parentCrd.ref, { namespace: ns })
    assert.equal(all.items.length, PARENTS)
    const ring = new HashRing(['r1', 'r2', 'r3'])
    for (const field of ['uid', 'namespace'] as const) {
      let total = 0
      for (const member of ring.members) {
        const ranges = ring.rangesOf(member)
        const served = await plane.client.list(parentCrd.ref, {
          namespace: ns,
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
  })
})
