// Client-side rate-limit budgets at upstream's defaults (--client-go-qps=5 --client-go-burst=10)
// with --discovery-interval=500ms: the idle request rate of each budget, and for parents created
// one at a time, how long after the hook answered the first child write and the last write of the
// sync were sent, and how long those writes waited for a token. Two modes:
//   split  — as the engine runs: objects, discovery and events each have their own bucket;
//   shared — one bucket for all three (the engine before the split), for comparison.
//
//   node --import tsx bench/client-budgets.ts [parents=10] [split|shared|both]
import type { KubeObject } from '../src/core/kube-object.js'
import { Engine } from '../src/engine/engine.js'
import type { EngineClientBudget } from '../src/engine/engine.js'
import type { RequestLimiter } from '../src/kube/kube-transport.js'
import { COMPOSITE_CONTROLLERS } from '../src/kube/well-known-resources.js'
import { tokenBucketLimiter } from '../src/runtime/rate-limit/token-bucket-limiter.js'
import { startControlPlane, waitFor } from '../src/testing/index.js'
import {
  METACONTROLLER_CRDS,
  isolatedComposite,
  serveHook,
} from '../test/support/engine-fixture.js'
import { createNamespace } from './bench-cluster.js'

const parents = Number(process.argv[2] ?? '10')
const mode = process.argv[3] ?? 'both'
const RATE = { qps: 5, burst: 10 }
const CHILDREN = 3
const IDLE_MS = 10_000
const world = isolatedComposite('BenchBudgetParent', 'BenchBudgetChild')

interface Take {
  readonly budget: EngineClientBudget
  readonly atMs: number
  readonly waitedMs: number
}

const plane = await startControlPlane({
  crds: [...METACONTROLLER_CRDS, world.parentCrd.crd, world.childCrd.crd],
})
const answeredAt = new Map<string, number>()
const hook = await serveHook((body) => {
  const name = (body as { parent: KubeObject }).parent.metadata.name ?? ''
  if (!answeredAt.has(name)) answeredAt.set(name, Date.now())
  return {
    status: { children: CHILDREN },
    children: Array.from({ length: CHILDREN }, (_, i) => ({
      apiVersion: world.childCrd.apiVersion,
      kind: 'BenchBudgetChild',
      metadata: { name: `${name}-${String(i)}`, labels: { app: name } },
    })),
  }
})

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
}

async function run(split: boolean): Promise<void> {
  const takes: Take[] = []
  const counted = (budget: EngineClientBudget, limiter: RequestLimiter): RequestLimiter => ({
    take: async (signal) => {
      const waitedMs = await limiter.take(signal)
      takes.push({ budget, atMs: Date.now(), waitedMs })
      return waitedMs
    },
  })
  const shared = tokenBucketLimiter(RATE)
  const ns = await createNamespace(plane.client, `bench-budget-${Date.now().toString(36)}`)
  const engine = new Engine(plane.config, {
    clientRateLimit: RATE,
    discoveryIntervalMs: 500,
    makeLimiter: (budget, rate) => {
      const limiter = split ? tokenBucketLimiter(rate) : shared
      return limiter === undefined ? undefined : counted(budget, limiter)
    },
  })
  await engine.start()
  await plane.client.create(COMPOSITE_CONTROLLERS, {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name: ns },
    spec: world.ccSpec(hook.url, ns),
  })
  await new Promise((resolve) => setTimeout(resolve, 3000))
  const idleFrom = Date.now()
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS))
  const idle = takes.filter((t) => t.atMs >= idleFrom)
  const perSecond = (budget: EngineClientBudget): string =>
    ((idle.filter((t) => t.budget === budget).length * 1000) / IDLE_MS).toFixed(1)
  const firstWrite: number[] = []
  const lastWrite: number[] = []
  const waited: number[] = []
  for (let i = 0; i < parents; i++) {
    // The second engine also serves the first run's controller: names keep the runs apart.
    const name = `${split ? 'split' : 'shared'}-${String(i)}`
    const from = Date.now()
    await plane.client.create(world.parentCrd.ref, world.parentObject(name, ns))
    await waitFor(
      async () => {
        const parent = await plane.client.get(world.parentCrd.ref, name, { namespace: ns })
        return (parent['status'] as { children?: number } | undefined)?.children === CHILDREN
      },
      { timeoutMs: 60_000, intervalMs: 50 }
    )
    const answered = answeredAt.get(name) ?? from
    const writes = takes.filter((t) => t.budget === 'objects' && t.atMs >= answered)
    firstWrite.push((writes[0]?.atMs ?? NaN) - answered)
    lastWrite.push((writes.at(-1)?.atMs ?? NaN) - answered)
    waited.push(Math.round(writes.reduce((sum, t) => sum + t.waitedMs, 0)))
    // One parent at a time, as a person editing parents would: the budget refills in between.
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
  await engine.stop()
  const label = split ? 'split (own bucket per client)' : 'shared (one bucket)'
  console.log(
    [
      `${label}: idle requests/s objects ${perSecond('objects')}, discovery ${perSecond('discovery')}, events ${perSecond('events')}`,
      `  hook answer → first write p50 ${percentile(firstWrite, 50)} ms, p99 ${percentile(firstWrite, 99)} ms`,
      `  hook answer → last write (status) p50 ${percentile(lastWrite, 50)} ms, p99 ${percentile(lastWrite, 99)} ms`,
      `  limiter wait per sync p50 ${percentile(waited, 50)} ms, max ${Math.max(...waited)} ms (${String(parents)} parents × ${String(CHILDREN)} children)`,
    ].join('\n')
  )
}

try {
  if (mode === 'shared' || mode === 'both') await run(false)
  if (mode === 'split' || mode === 'both') await run(true)
} finally {
  await hook.close()
  await plane.stop()
}
