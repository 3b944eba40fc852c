// Takeover time of leader election: two `metactl run` replicas with client-go's default durations
// (lease 15 s, renew 10 s, retry 2 s); the leader is killed (SIGKILL) or terminated (SIGTERM), a
// new parent is created at once, and the time until its child exists is the takeover time: kill →
// first write by the new leader. A fresh standby replaces the old leader before the next round.
//
//   node --import tsx bench/leader-takeover.ts [rounds=10] [kill|term|both]
import type { KubeObject } from '../src/core/kube-object.js'
import { startControlPlane, waitFor } from '../src/testing/index.js'
import { COMPOSITE_CONTROLLERS } from '../src/kube/well-known-resources.js'
import {
  METACONTROLLER_CRDS,
  isolatedComposite,
  serveHook,
} from '../test/support/engine-fixture.js'
import { spawnEngine } from '../test/support/spawned-engine.js'
import type { SpawnedEngine } from '../test/support/spawned-engine.js'
import { createNamespace } from './bench-cluster.js'

const rounds = Number(process.argv[2] ?? '10')
const mode = process.argv[3] ?? 'both'
const world = isolatedComposite('BenchLeParent', 'BenchLeChild')
const plane = await startControlPlane({
  crds: [...METACONTROLLER_CRDS, world.parentCrd.crd, world.childCrd.crd],
})
const ns = await createNamespace(plane.client, `bench-le-${Date.now().toString(36)}`)
const hook = await serveHook((body) => {
  const name = (body as { parent: KubeObject }).parent.metadata.name ?? ''
  return {
    status: {},
    children: [
      {
        apiVersion: world.childCrd.apiVersion,
        kind: 'BenchLeChild',
        metadata: { name, labels: { app: name } },
      },
    ],
  }
})
await plane.client.create(COMPOSITE_CONTROLLERS, {
  apiVersion: 'metacontroller.k8s.io/v1alpha1',
  kind: 'CompositeController',
  metadata: { name: ns },
  spec: world.ccSpec(hook.url, ns),
})
const args = ['--leader-election', '--leader-election-namespace', ns, '--leader-election-id', ns]
const engines: SpawnedEngine[] = []
const standby = async (): Promise<SpawnedEngine> => {
  const engine = spawnEngine(plane.kubeconfigPath, args)
  engines.push(engine)
  await engine.line('started controller', 120_000)
  return engine
}
const leads = (e: SpawnedEngine): boolean =>
  e.lines.some((l) => l['msg'] === 'Successfully acquired lease')
const running = (e: SpawnedEngine): boolean =>
  e.process.exitCode === null && e.process.signalCode === null

async function round(kind: 'kill' | 'term', i: number): Promise<number> {
  const live = engines.filter(running)
  const leader = await waitFor(() => live.find(leads), { timeoutMs: 60_000 })
  const name = `${kind}-${i}`
  const t0 = Date.now()
  leader.process.kill(kind === 'kill' ? 'SIGKILL' : 'SIGTERM')
  await plane.client.create(world.parentCrd.ref, world.parentObject(name, ns))
  await waitFor(
    () => plane.client.get(world.childCrd.ref, name, { namespace: ns }).catch(() => undefined),
    {
      timeoutMs: 120_000,
      intervalMs: 20,
    }
  )
  const ms = Date.now() - t0
  await leader.exited
  await standby()
  return ms
}

function summary(label: string, samples: number[]): void {
  const sorted = [...samples].sort((a, b) => a - b)
  const median =
    sorted.length % 2 === 1
      ? (sorted[(sorted.length - 1) / 2] ?? 0)
      : ((sorted[sorted.length / 2 - 1] ?? 0) + (sorted[sorted.length / 2] ?? 0)) / 2
  const s = (ms: number): string => (ms / 1000).toFixed(2)
  console.log(
    `${label}: n=${samples.length} min ${s(sorted[0] ?? 0)} s, median ${s(median)} s, max ${s(sorted.at(-1) ?? 0)} s (${samples.map(s).join(', ')})`
  )
}

try {
  await standby()
  await standby()
  for (const kind of mode === 'both'
    ? (['kill', 'term'] as const)
    : ([mode] as ('kill' | 'term')[])) {
    const samples: number[] = []
    for (let i = 0; i < rounds; i++) {
      samples.push(await round(kind, i))
      console.log(`${kind} ${i + 1}/${rounds}: ${samples.at(-1)} ms`)
    }
    summary(kind === 'kill' ? 'SIGKILL → first write' : 'SIGTERM → first write', samples)
  }
} finally {
  for (const engine of engines) engine.kill()
  await Promise.all(engines.map((e) => e.exited))
  await plane.client.delete(COMPOSITE_CONTROLLERS, ns).catch(() => undefined)
  await hook.close()
  await plane.stop()
}
