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
import { createServer } from 'node:http'
import { loadavg } from 'node:os'
import type { AddressInfo } from 'node:net'
import type { KubeObject } from '../src/core/kube-object.js'
import type { CompositeSyncRequest, CompositeSyncResponse } from '../src/api/hook-model.js'
import { DynamicClient } from '../src/kube/dynamic-client.js'
import type { ResourceRef } from '../src/kube/dynamic-client.js'
import { KubeTransport } from '../src/kube/kube-transport.js'
import { parseApplyStrategy } from '../src/engine/children/child-applier.js'
import { Engine } from '../src/engine/engine.js'
import { startControlPlane } from '../src/testing/index.js'
import type { ControlPlane } from '../src/testing/index.js'
import { COMPOSITE_CONTROLLERS } from '../src/kube/well-known-resources.js'
import { CONFIGMAPS, createNamespace, mib, runBounded } from './bench-cluster.js'
import { measureWriteCeiling } from './write-throughput.js'

const PARENTS: ResourceRef = {
  group: 'bench.metacontroller-ts.dev',
  version: 'v1',
  resource: 'benchparents',
  namespaced: true,
}
const CCS = COMPOSITE_CONTROLLERS
const CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'benchparents.bench.metacontroller-ts.dev' },
  spec: {
    group: 'bench.metacontroller-ts.dev',
    scope: 'Namespaced',
    names: { plural: 'benchparents', singular: 'benchparent', kind: 'BenchParent' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      },
    ],
  },
}

function desired(parent: KubeObject): { status: Record<string, unknown>; children: KubeObject[] } {
  const name = parent.metadata.name ?? ''
  const n = String((parent['spec'] as { n?: number } | undefined)?.n ?? '')
  return {
    status: { ready: true },
    children: ['a', 'b'].map((suffix) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `${name}-${suffix}` },
      data: { parent: name, part: suffix, n },
    })),
  }
}

const sync = (request: CompositeSyncRequest): Promise<CompositeSyncResponse> =>
  Promise.resolve({ ...desired(request.parent), resyncAfterMs: 0, finalized: false })

const controllerSpec = (hookUrl?: string): Record<string, unknown> => ({
  generateSelector: true,
  parentResource: { apiVersion: 'bench.metacontroller-ts.dev/v1', resource: 'benchparents' },
  childResources: [
    { apiVersion: 'v1', resource: 'configmaps', updateStrategy: { method: 'InPlace' } },
  ],
  hooks: { sync: hookUrl === undefined ? {} : { webhook: { url: hookUrl } } },
})

async function serveWebhook(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { parent: KubeObject }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(desired(body.parent)))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sync`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => {
          resolve()
        })
      }),
  }
}

/** Every parent synced at its generation and every child there, with data `n` as `want` says. */
async function converged(
  client: DynamicClient,
  ns: string,
  count: number,
  want: (child: KubeObject) => boolean = () => true
): Promise<boolean> {
  const parents = await client.list(PARENTS, { namespace: ns })
  const done = parents.items.filter((p) => {
    const status = p['status'] as { observedGeneration?: number; ready?: boolean } | undefined
    return status?.ready === true && status.observedGeneration === p.metadata.generation
  }).length
  if (done < count) return false
  const children = await client.list(CONFIGMAPS, { namespace: ns, labelSelector: 'controller-uid' })
  return children.items.filter(want).length >= 2 * count
}

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
    await runBounded(count, 16, (i) =>
      client.create(PARENTS, {
        apiVersion: 'bench.metacontroller-ts.dev/v1',
        kind: 'BenchParent',
        metadata: { name: `p-${i}`, namespace: ns },
        spec: { n: i },
      })
    )
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
const plane = await startControlPlane({
  useExistingCluster: process.env['METACTL_USE_EXISTING_CLUSTER'] === '1',
  // No Pods here: the smaller plane keeps the figures in docs/performance.md comparable.
  nodes: 0,
  crds: [
    CRD,
    'deploy/crds/compositecontrollers.yaml',
    'deploy/crds/decoratorcontrollers.yaml',
    'deploy/crds/controllerrevisions.yaml',
  ],
})
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
