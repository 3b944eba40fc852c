// Engine throughput: N parents created at once, each syncing to 2 children (ConfigMaps).
// Reports seconds until every child exists and every parent's status carries its
// observedGeneration, engine CPU and peak RSS, API requests per parent, and the writes of a
// resync of the converged set (a fresh engine over the same parents: must be zero), then a spec
// change of every parent (update throughput and writes per parent). Runs with an in-process hook
// and with a webhook, and measures the raw write ceiling in the same run. BENCH_APPLY_STRATEGY
// picks the child applier (`--apply-strategy`).
//
//   [BENCH_WORKERS=5] [BENCH_APPLY_STRATEGY=dynamic-apply|server-side-apply] \
//     node --import tsx bench/engine-parents.ts [parents=1000] [inprocess|webhook|both]
//
// Sizes above 3,000 (10,000 is the one documented) are opt-in: set BENCH_LARGE=1, so that a typo
// does not start an hour-long run on a shared machine (`make bench-large`).
import { loadavg } from 'node:os'
import type { KubeObject } from '../src/core/kube-object.js'
import type { CompositeSyncRequest, CompositeSyncResponse } from '../src/api/hook-model.js'
import { DynamicClient } from '../src/kube/dynamic-client.js'
import { KubeTransport } from '../src/kube/kube-transport.js'
import { parseApplyStrategy } from '../src/engine/children/child-applier.js'
import { Engine } from '../src/engine/engine.js'
import type { ControlPlane } from '../src/testing/index.js'
import { COMPOSITE_CONTROLLERS } from '../src/kube/well-known-resources.js'
import { createNamespace, mib, runBounded } from './bench-cluster.js'
import {
  benchParent,
  controllerSpec,
  desired,
  startBenchPlane,
  PARENTS,
  parentsConverged as converged,
  serveWebhook,
} from './bench-parents.js'
import { measureWriteCeiling } from './write-throughput.js'

const CCS = COMPOSITE_CONTROLLERS

const sync = (request: CompositeSyncRequest): Promise<CompositeSyncResponse> =>
  Promise.resolve({ ...desired(request.parent), resyncAfterMs: 0, finalized: false })

async function runMode(
  plane: ControlPlane,
  mode: 'inprocess' | 'webhook',
  count: number
): Promise<void> {
  const transport = new KubeTransport(plane.config)
  const client = new DynamicClient(transport)
  const ns = await createNamespace(client, `bench-engine-${mode}-${Date.now()}`)
  const hook = mode === 'webhook' ? await serveWebhook() : undefined
  const name = `bench-${mode}`
  const startEngine = async (): Promise<Engine> => {
    const engine = new Engine(plane.config, {
      workers: WORKERS,
      applyStrategy: STRATEGY,
      watchCompositeControllers: mode === 'webhook',
      discoveryIntervalMs: 30_000,
    })
    await engine.start()
    if (mode === 'inprocess')
      await engine.addCompositeController({ name, spec: controllerSpec(), hooks: { sync } })
    return engine
  }
  let peakRss = process.memoryUsage().rss
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss)
  }, 100)
  try {
    if (hook !== undefined) {
      await client.create(CCS, {
        apiVersion: 'metacontroller.k8s.io/v1alpha1',
        kind: 'CompositeController',
        metadata: { name },
        spec: controllerSpec(hook.url),
      })
    }
    const engine = await startEngine()
    const cpuBefore = process.cpuUsage()
    const started = performance.now()
    await runBounded(count, 16, (i) => client.create(PARENTS, benchParent(`p-${i}`, ns, i)))
    const createdAt = performance.now()
    while (!(await converged(client, ns, count)))
      await new Promise((resolve) => setTimeout(resolve, 250))
    const seconds = (performance.now() - started) / 1000
    const cpu = process.cpuUsage(cpuBefore)
    const requests = await engine.metrics.requestTotals()
    const convergedRss = process.memoryUsage().rss
    console.log(
      `engine-parents (${mode}, ${STRATEGY}, ${WORKERS} workers): ${count} parents created in ${((createdAt - started) / 1000).toFixed(1)} s; ` +
        `converged in ${seconds.toFixed(1)} s; process CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s; ` +
        `peak RSS ${mib(peakRss)} MiB; engine API requests ${requests.total} (${(requests.total / count).toFixed(1)} per parent), ` +
        `writes ${requests.writes} (${(requests.writes / count).toFixed(1)} per parent); ` +
        `RSS after convergence ${mib(convergedRss)} MiB`
    )
    await engine.stop()

    // A fresh engine over the converged set syncs every parent once; nothing may be written.
    const again = await startEngine()
    const resyncStarted = performance.now()
    await new Promise((resolve) => setTimeout(resolve, 2000))
    let last = -1
    for (;;) {
      const { total } = await again.metrics.requestTotals()
      if (total === last) break
      last = total
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
    const resync = await again.metrics.requestTotals()
    console.log(
      `engine-parents (${mode}, ${STRATEGY}): resync of the converged set: ${resync.writes} writes, ${resync.total} requests, ` +
        `settled in ${((performance.now() - resyncStarted) / 1000).toFixed(1)} s`
    )
    await specChange(client, again, ns, count, `engine-parents (${mode}, ${STRATEGY})`)
    await again.stop()
  } finally {
    clearInterval(sampler)
    if (hook !== undefined) {
      await client.delete(CCS, name).catch(() => undefined)
      await hook.close()
    }
    await transport.close()
  }
}

/** Changes the spec of every parent and reports how long and how many writes the update takes. */
async function specChange(
  client: DynamicClient,
  engine: Engine,
  ns: string,
  count: number,
  label: string
): Promise<void> {
  const before = await engine.metrics.requestTotals()
  const started = performance.now()
  await runBounded(count, 16, (i) =>
    client.patch(PARENTS, `p-${i}`, { spec: { n: i + count } }, { namespace: ns, type: 'merge' })
  )
  const updated = (child: KubeObject): boolean => {
    const data = child['data'] as { parent?: string; n?: string } | undefined
    const i = Number(data?.parent?.slice(2))
    return data?.n === String(i + count)
  }
  while (!(await converged(client, ns, count, updated)))
    await new Promise((resolve) => setTimeout(resolve, 250))
  const seconds = (performance.now() - started) / 1000
  const after = await engine.metrics.requestTotals()
  const writes = after.writes - before.writes
  const total = after.total - before.total
  console.log(
    `${label}: spec change of ${count} parents converged in ${seconds.toFixed(1)} s; ` +
      `engine requests ${total} (${(total / count).toFixed(1)} per parent), writes ${writes} ` +
      `(${(writes / count).toFixed(1)} per parent)`
  )
}

const count = Number(process.argv[2] ?? 1000)
/** The child applier (`--apply-strategy`): dynamic-apply unless told otherwise. */
const STRATEGY = parseApplyStrategy(process.env['BENCH_APPLY_STRATEGY'])
/** Largest size run without BENCH_LARGE=1. */
const LARGEST_DEFAULT_SIZE = 3000
if (!Number.isInteger(count) || count < 1) throw new Error(`parents must be a positive integer`)
if (count > LARGEST_DEFAULT_SIZE && process.env['BENCH_LARGE'] !== '1') {
  throw new Error(
    `${count} parents is opt-in (it runs for many minutes): set BENCH_LARGE=1, or use make bench-large`
  )
}
console.log(
  `engine-parents: load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at start`
)
/** Workers per hosted controller (`--workers`; upstream's default is 5). */
const WORKERS = Number(process.env['BENCH_WORKERS'] ?? 5)
const which = process.argv[3] ?? 'both'
const plane = await startBenchPlane()
try {
  // The engine writes about 3 objects per parent (2 children, 1 status): the same count of raw writes.
  const ceiling = await measureWriteCeiling(plane, count * 3, 16)
  console.log(
    `engine-parents: raw write ceiling for ${ceiling.count} writes: ${ceiling.seconds.toFixed(1)} s (${ceiling.objectsPerSecond.toFixed(0)}/s)`
  )
  if (which === 'both' || which === 'inprocess') await runMode(plane, 'inprocess', count)
  if (which === 'both' || which === 'webhook') await runMode(plane, 'webhook', count)
} finally {
  await plane.stop()
}
