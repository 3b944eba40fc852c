// The compiled engine at scale: `node bin/metactl.js run` (what users run) as its own process,
// serving a CompositeController whose webhook (served here, ETag mode on by default) gives every
// BenchParent two ConfigMaps and a status. Phases, each reported:
//   (a) N parents created at 16 in flight: time until all are synced and all 2N children exist,
//       engine CPU, peak RSS, API requests and writes per parent; the raw write ceiling for the
//       same writes (3 per parent) is measured in the same run, after the engine phases.
//   (b) steady state (BENCH_STEADY_S, 30 s): writes must be 0; RSS after convergence.
//   (c) churn (BENCH_CHURN_S, 60 s): 10 % of the N parents updated per minute (spec.n, so the
//       children change) and new parents created at BENCH_CREATE_RATE (2/s): p50/p99 of
//       create→both children and update→both children carry the new n, seen by a ConfigMap
//       informer in this process.
//   (d) forced resync: a fresh engine over the converged set (writes must be 0, hook calls and
//       304s counted), then the same engine's periodic resync (`--cache-flush-interval`,
//       BENCH_FLUSH_S) with its ETag cache warm: every hook call should be a 304.
// Engine RSS, peak RSS and CPU come from /proc/PID every 250 ms; requests from its /metrics.
//
//   [BENCH_LARGE=1] [BENCH_ETAG=0] [BENCH_WORKERS=5] [BENCH_CPU_PROF=dir] [BENCH_HEAP_SNAPSHOT=dir] \
//     node --import tsx bench/engine-process.ts [parents=1000]
//
// BENCH_CPU_PROF passes --cpu-prof to each engine (written when it exits on SIGTERM);
// BENCH_HEAP_SNAPSHOT takes one heap snapshot after the steady phase (SIGUSR2). Summarise either
// with bench/profile-summary.ts. BENCH_ENGINE_NODE_ARGS adds node flags to each engine (space
// separated, e.g. `--max-semi-space-size=1`), to measure V8 settings an operator might set.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { KubeObject } from '../src/core/kube-object.js'
import { DynamicClient } from '../src/kube/dynamic-client.js'
import { KubeTransport } from '../src/kube/kube-transport.js'
import { COMPOSITE_CONTROLLERS, NAMESPACES } from '../src/kube/well-known-resources.js'
import { Informer, stripManagedFields } from '../src/runtime/informers/informer.js'
import { dynamicListWatcher } from '../src/runtime/informers/list-watcher.js'
import type { ControlPlane } from '../src/testing/index.js'
import { CONFIGMAPS, createNamespace, mib, runBounded } from './bench-cluster.js'
import {
  ChildLatencies,
  quantile,
  readServerLatencies,
  serverLatencyRows,
} from './bench-observers.js'
import type { ServerLatencies } from './bench-observers.js'
import {
  benchParent,
  controllerSpec,
  startBenchPlane,
  PARENTS,
  parentSynced,
  serveWebhook,
} from './bench-parents.js'
import type { BenchWebhook, HookCounts } from './bench-parents.js'
import { EngineProcess, ensureFreshBuild, requestsSince } from './engine-process-handle.js'
import type { HistogramTotals } from './engine-process-handle.js'
import { measureWriteCeiling } from './write-throughput.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const COUNT = Number(process.argv[2] ?? 1000)
const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback)
const STEADY_MS = env('BENCH_STEADY_S', 30) * 1000
const CHURN_MS = env('BENCH_CHURN_S', 60) * 1000
const CREATES_PER_S = env('BENCH_CREATE_RATE', 2)
const WORKERS = env('BENCH_WORKERS', 5)
const ETAG = process.env['BENCH_ETAG'] !== '0'
/** Periodic resync of the second engine: late enough that its restart resync is over. */
const FLUSH_S = env('BENCH_FLUSH_S', Math.max(30, Math.ceil(COUNT / 100)))
const CPU_PROF = process.env['BENCH_CPU_PROF']
const HEAP_SNAPSHOT = process.env['BENCH_HEAP_SNAPSHOT']
/** Largest size run without BENCH_LARGE=1. */
const LARGEST_DEFAULT_SIZE = 3000
const CONTROLLER = 'bench-engine-process'

/** Everything a phase needs. */
interface Bench {
  readonly plane: ControlPlane
  readonly transport: KubeTransport
  readonly client: DynamicClient
  readonly ns: string
  readonly hook: BenchWebhook
  readonly parents: Informer
  readonly children: Informer
  readonly latencies: ChildLatencies
  readonly dir: string
  /** Parents that exist: N plus those created during churn. */
  parentCount: number
  /** Figures for the summary, in the order measured. */
  readonly figures: Record<string, number | string | boolean>
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
const seconds = (ms: number): number => Math.round(ms / 10) / 100
const round = (value: number, digits = 1): number => Number(value.toFixed(digits))
const mibNumber = (bytes: number): number => Number(mib(bytes))

/** Polls `done` every 250 ms; false if `timeoutMs` passes first. */
async function until(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs
  while (!done()) {
    if (performance.now() > deadline) return false
    await sleep(250)
  }
  return true
}

function record(bench: Bench, values: Record<string, number | string | boolean>): void {
  Object.assign(bench.figures, values)
  console.log(
    Object.entries(values)
      .map(([k, v]) => `  ${k}: ${String(v)}`)
      .join('\n')
  )
}

function hookSince(bench: Bench, before: HookCounts): HookCounts {
  const now = bench.hook.counts
  return {
    requests: now.requests - before.requests,
    ok: now.ok - before.ok,
    notModified: now.notModified - before.notModified,
  }
}

function engineOptions(bench: Bench, label: string, args: string[], nodeArgs: string[] = []) {
  const profile = CPU_PROF === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`]
  const extra = (process.env['BENCH_ENGINE_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '')
  return {
    root: ROOT,
    kubeconfig: bench.plane.kubeconfigPath,
    logFile: join(bench.dir, `${label}.log`),
    args: [`--workers=${WORKERS}`, ...args],
    nodeArgs: [...profile, ...extra, ...nodeArgs],
  }
}

function printServerLatencies(label: string, after: ServerLatencies, before: ServerLatencies) {
  const rows = serverLatencyRows(after, before, ['configmaps', 'benchparents'])
  console.log(`  API server (${label}), apiserver_request_duration_seconds by verb and resource:`)
  for (const row of rows)
    console.log(
      `    ${row.key}: ${row.count} requests, mean ${row.meanMs.toFixed(1)} ms, ${row.totalS.toFixed(1)} s in all`
    )
}

const ENGINE_HISTOGRAMS = [
  'workqueue_queue_duration_seconds',
  'workqueue_work_duration_seconds',
  'controller_runtime_reconcile_time_seconds',
  'rest_client_request_duration_seconds',
  'controller_runtime_reconcile',
  'workqueue_retries',
  'metacontroller_sync_request_duration_histogram_seconds',
]

/** Mean latencies the engine itself measured between two scrapes (queue wait, sync, API calls). */
async function printEngineLatencies(label: string, engine: EngineProcess, before: HistogramTotals) {
  const after = await engine.histograms(ENGINE_HISTOGRAMS)
  console.log(`  engine (${label}), its own histograms, mean per observation:`)
  for (const [key, { sum, count }] of after) {
    const prior = before.get(key) ?? { sum: 0, count: 0 }
    const n = count - prior.count
    if (n > 0) console.log(`    ${key}: ${n} × ${(((sum - prior.sum) / n) * 1000).toFixed(1)} ms`)
    else if (count === 0 && sum > prior.sum) console.log(`    ${key}: ${sum - prior.sum}`)
  }
}

/** Counts parents synced at their generation and children carrying a parent's data. */
function convergedCounts(bench: Bench): { synced: number; children: number } {
  const synced = bench.parents.store.list().filter(parentSynced).length
  const children = bench.children.store
    .list()
    .filter((c) => (c['data'] as { parent?: string } | undefined)?.parent !== undefined).length
  return { synced, children }
}

/** (a) Creates N parents and waits until every one is synced and every child exists. */
async function phaseConverge(bench: Bench, engine: EngineProcess) {
  console.log(`(a) convergence of ${COUNT} parents`)
  // The engine is ready once its caches are synced; the controller starts right after.
  await sleep(2000)
  const start = engine.sample()
  const requestsBefore = await engine.requests()
  const hookBefore = { ...bench.hook.counts }
  const serverBefore = await readServerLatencies(bench.transport)
  const engineBefore = await engine.histograms(ENGINE_HISTOGRAMS)
  const started = performance.now()
  await runBounded(COUNT, 16, (i) =>
    bench.client.create(PARENTS, benchParent(`p-${i}`, bench.ns, i))
  )
  const createdMs = performance.now() - started
  const done = await until(() => {
    const { synced, children } = convergedCounts(bench)
    return synced >= COUNT && children >= 2 * COUNT
  }, 3_600_000)
  if (!done) throw new Error('the parents did not converge within an hour')
  const convergedMs = performance.now() - started
  const end = engine.sample()
  const requests = requestsSince(await engine.requests(), requestsBefore)
  record(bench, {
    'start-up RSS MiB': mibNumber(start.rssBytes),
    'start-up peak RSS MiB': mibNumber(start.peakRssBytes),
    'created in s': seconds(createdMs),
    'converged in s': seconds(convergedMs),
    'engine CPU s (a)': seconds(end.cpuMs - start.cpuMs),
    'engine CPU ms / parent': round((end.cpuMs - start.cpuMs) / COUNT, 2),
    'peak RSS MiB (a)': mibNumber(end.peakRssBytes),
    'RSS at convergence MiB': mibNumber(end.rssBytes),
    'requests / parent': round(requests.total / COUNT, 2),
    'writes / parent': round(requests.writes / COUNT, 2),
    'writes by method (a)': JSON.stringify(requests.byMethod),
    'hook requests (a)': hookSince(bench, hookBefore).requests,
    'hook 304s (a)': hookSince(bench, hookBefore).notModified,
  })
  printServerLatencies('a', await readServerLatencies(bench.transport), serverBefore)
  await printEngineLatencies('a', engine, engineBefore)
}

/** (b) Nothing changes: the engine must write nothing; RSS after convergence. */
async function phaseSteady(bench: Bench, engine: EngineProcess) {
  console.log(`(b) steady state for ${STEADY_MS / 1000} s`)
  const before = await engine.requests()
  const start = engine.sample()
  const hookBefore = { ...bench.hook.counts }
  const engineBefore = await engine.histograms(ENGINE_HISTOGRAMS)
  await sleep(STEADY_MS)
  const requests = requestsSince(await engine.requests(), before)
  const end = engine.sample()
  record(bench, {
    'steady writes': requests.writes,
    'steady requests': requests.total,
    'steady hook requests': hookSince(bench, hookBefore).requests,
    'steady hook 304s': hookSince(bench, hookBefore).notModified,
    'steady CPU s': seconds(end.cpuMs - start.cpuMs),
    'RSS after convergence MiB': mibNumber(end.rssBytes),
    'RSS growth MiB / 1,000 parents': round(
      (((end.rssBytes - Number(bench.figures['start-up RSS MiB']) * 1024 * 1024) / COUNT) * 1000) /
        1024 /
        1024,
      2
    ),
  })
  await printEngineLatencies('b', engine, engineBefore)
}

/** Sends SIGUSR2 and waits until the snapshot file stops growing. */
async function takeHeapSnapshot(bench: Bench, engine: EngineProcess, dir: string) {
  const before = new Set(readdirSync(dir))
  const started = performance.now()
  engine.signal('SIGUSR2')
  let file: string | undefined
  let size = -1
  for (;;) {
    await sleep(1000)
    file ??= readdirSync(dir).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'))
    if (file === undefined) continue
    const now = statSync(join(dir, file)).size
    const answers = await engine.requests().then(
      () => true,
      () => false
    )
    if (now === size && now > 0 && answers) break
    size = now
  }
  record(bench, {
    'heap snapshot': join(dir, file),
    'heap snapshot s': seconds(performance.now() - started),
    'heap snapshot MiB': mibNumber(size),
  })
}

/** One churn operation: expects the children, then sends the request. */
function churnOperation(bench: Bench, kind: 'create' | 'update', i: number): Promise<unknown> {
  const name = kind === 'create' ? `q-${i}` : `p-${i % COUNT}`
  const n = kind === 'create' ? i : i + COUNT
  bench.latencies.expect(name, n, kind, performance.now())
  return kind === 'create'
    ? bench.client.create(PARENTS, benchParent(name, bench.ns, n))
    : bench.client.patch(PARENTS, name, { spec: { n } }, { namespace: bench.ns, type: 'merge' })
}

/** (c) Updates 10 % of the parents per minute and creates new ones; children latencies. */
async function phaseChurn(bench: Bench, engine: EngineProcess) {
  const updatesPerS = (0.1 * COUNT) / 60
  console.log(
    `(c) churn for ${CHURN_MS / 1000} s: ${(updatesPerS * 60).toFixed(0)} updates/min, ${CREATES_PER_S} creates/s`
  )
  const before = await engine.requests()
  const start = engine.sample()
  const hookBefore = { ...bench.hook.counts }
  const serverBefore = await readServerLatencies(bench.transport)
  const engineBefore = await engine.histograms(ENGINE_HISTOGRAMS)
  const sent: Promise<unknown>[] = []
  let updates = 0
  let creates = 0
  let failures = 0
  const started = performance.now()
  for (let elapsed = 0; elapsed < CHURN_MS; elapsed = performance.now() - started) {
    // Operations are due on a fixed schedule, not after the previous answer: a slow API server
    // shows as latency, not as a lower rate.
    while (updates < Math.floor((elapsed / 1000) * updatesPerS))
      sent.push(churnOperation(bench, 'update', updates++).catch(() => failures++))
    while (creates < Math.floor((elapsed / 1000) * CREATES_PER_S))
      sent.push(churnOperation(bench, 'create', creates++).catch(() => failures++))
    await sleep(20)
  }
  await Promise.all(sent)
  bench.parentCount += creates
  const drained = await until(() => bench.latencies.pending === 0, 300_000)
  const requests = requestsSince(await engine.requests(), before)
  const end = engine.sample()
  const { create, update } = bench.latencies
  const ms = (values: number[], q: number): number => Math.round(quantile(values, q))
  record(bench, {
    'churn updates': updates,
    'churn creates': creates,
    'churn failed requests': failures,
    'churn still pending after 300 s': drained ? 0 : bench.latencies.pending,
    'create→children p50 ms': ms(create, 0.5),
    'create→children p99 ms': ms(create, 0.99),
    'create→children max ms': ms(create, 1),
    'update→children p50 ms': ms(update, 0.5),
    'update→children p99 ms': ms(update, 0.99),
    'update→children max ms': ms(update, 1),
    'churn writes / operation': round(requests.writes / (updates + creates), 2),
    'churn CPU s': seconds(end.cpuMs - start.cpuMs),
    'churn hook requests': hookSince(bench, hookBefore).requests,
    'churn hook 304s': hookSince(bench, hookBefore).notModified,
    'peak RSS MiB (a–c)': mibNumber(end.peakRssBytes),
    'RSS after churn MiB': mibNumber(end.rssBytes),
  })
  printServerLatencies('c', await readServerLatencies(bench.transport), serverBefore)
  await printEngineLatencies('c', engine, engineBefore)
}

/** Waits until the hook has answered `count` more requests, then until the engine is quiet. */
async function awaitResync(bench: Bench, engine: EngineProcess, before: HookCounts) {
  const total = bench.parentCount
  let firstMs: number | undefined
  const done = await until(() => {
    const seen = bench.hook.counts.requests - before.requests
    if (seen > 0) firstMs ??= performance.now()
    return seen >= total
  }, 900_000)
  const doneMs = performance.now()
  // Quiet: no API request and no hook call for 2 s.
  let last = ''
  for (;;) {
    const now = `${(await engine.requests()).total}/${bench.hook.counts.requests}`
    if (now === last) break
    last = now
    await sleep(2000)
  }
  return { done, firstMs: firstMs ?? doneMs, doneMs }
}

/** (d) A fresh engine over the converged set, then its periodic resync with a warm ETag cache. */
async function phaseResync(bench: Bench): Promise<void> {
  console.log(
    `(d) resync of ${bench.parentCount} converged parents: fresh engine, then --cache-flush-interval=${FLUSH_S}s`
  )
  const hookBefore = { ...bench.hook.counts }
  const engine = await EngineProcess.start(
    engineOptions(bench, 'engine-2', [`--cache-flush-interval=${FLUSH_S}s`])
  )
  try {
    const restart = await awaitResync(bench, engine, hookBefore)
    const afterRestart = await engine.requests()
    const hook = hookSince(bench, hookBefore)
    const sample = engine.sample()
    record(bench, {
      'restart resync s (spawn → every parent hooked)': seconds(restart.doneMs - engine.startedMs),
      'restart resync writes': afterRestart.writes,
      'restart resync requests': afterRestart.total,
      'restart resync requests by method': JSON.stringify(afterRestart.byMethod),
      'restart resync hook requests': hook.requests,
      'restart resync hook 304s': hook.notModified,
      'RSS after restart resync MiB': mibNumber(sample.rssBytes),
      'restart peak RSS MiB': mibNumber(sample.peakRssBytes),
      'restart CPU s': seconds(sample.cpuMs),
    })
    await printEngineLatencies('d, restart', engine, new Map())
    const engineBefore = await engine.histograms(ENGINE_HISTOGRAMS)
    const flushBefore = { ...bench.hook.counts }
    const flush = await awaitResync(bench, engine, flushBefore)
    const requests = requestsSince(await engine.requests(), afterRestart)
    const flushHook = hookSince(bench, flushBefore)
    const end = engine.sample()
    record(bench, {
      'flush resync s (first → last hook call)': seconds(flush.doneMs - flush.firstMs),
      'flush resync writes': requests.writes,
      'flush resync requests': requests.total,
      'flush resync hook requests': flushHook.requests,
      'flush resync hook 304s': flushHook.notModified,
      'flush resync CPU s': seconds(end.cpuMs - sample.cpuMs),
      'RSS after flush resync MiB': mibNumber(end.rssBytes),
    })
    await printEngineLatencies('d, flush', engine, engineBefore)
  } finally {
    const exit = await engine.stop()
    record(bench, {
      'engine 2 exit': `${String(exit.code ?? exit.signal)} in ${seconds(exit.stopMs)} s`,
    })
  }
}

/**
 * Measures the raw write ceiling after the engine phases: its ConfigMaps would otherwise sit in
 * the engine's cluster-wide ConfigMap cache (and deleting 30,000 of them outlasts the API
 * server's request timeout).
 */
async function ceiling(plane: ControlPlane): Promise<number> {
  const result = await measureWriteCeiling(plane, COUNT * 3, 16)
  console.log(
    `raw write ceiling for ${result.count} writes: ${result.seconds.toFixed(1)} s (${result.objectsPerSecond.toFixed(0)}/s)`
  )
  return result.seconds
}

/** Starts the benchmark's own informers and the webhook, and creates the CompositeController. */
async function setUp(plane: ControlPlane, dir: string): Promise<Bench> {
  const transport = new KubeTransport(plane.config)
  const client = new DynamicClient(transport)
  const ns = await createNamespace(client, `bench-engine-process-${Date.now()}`)
  const hook = await serveWebhook({ etag: ETAG })
  await client.create(COMPOSITE_CONTROLLERS, {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name: CONTROLLER },
    spec: controllerSpec(hook.url, ETAG),
  })
  const latencies = new ChildLatencies()
  const informer = (ref: typeof PARENTS): Informer =>
    new Informer(dynamicListWatcher(client, ref, { namespace: ns }), {
      transform: stripManagedFields,
    })
  const parents = informer(PARENTS)
  const children = informer(CONFIGMAPS)
  children.subscribe({
    onAdd: (child: KubeObject) => {
      latencies.observe(child)
    },
    onUpdate: (_old: KubeObject, child: KubeObject) => {
      latencies.observe(child)
    },
  })
  parents.start()
  children.start()
  await Promise.all([parents.waitForSync(), children.waitForSync()])
  const figures = { parents: COUNT, etag: ETAG, workers: WORKERS }
  return {
    plane,
    transport,
    client,
    ns,
    hook,
    parents,
    children,
    latencies,
    dir,
    parentCount: COUNT,
    figures,
  }
}

async function tearDown(bench: Bench): Promise<void> {
  await Promise.all([bench.parents.stop(), bench.children.stop()])
  await bench.client.delete(COMPOSITE_CONTROLLERS, CONTROLLER).catch(() => undefined)
  if (bench.plane.isExisting) await bench.client.delete(NAMESPACES, bench.ns).catch(() => undefined)
  await bench.hook.close()
  await bench.transport.close()
}

/** Runs the phases against one engine process, then the resync against a second one. */
async function run(plane: ControlPlane, dir: string): Promise<Record<string, unknown>> {
  const bench = await setUp(plane, dir)
  try {
    const heapArgs =
      HEAP_SNAPSHOT === undefined
        ? []
        : ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${HEAP_SNAPSHOT}`]
    const engine = await EngineProcess.start(engineOptions(bench, 'engine-1', [], heapArgs))
    try {
      await phaseConverge(bench, engine)
      await phaseSteady(bench, engine)
      if (HEAP_SNAPSHOT !== undefined) await takeHeapSnapshot(bench, engine, HEAP_SNAPSHOT)
      await phaseChurn(bench, engine)
    } finally {
      const exit = await engine.stop()
      record(bench, {
        'engine 1 exit': `${String(exit.code ?? exit.signal)} in ${seconds(exit.stopMs)} s${exit.clean ? '' : ' (killed)'}`,
      })
    }
    await phaseResync(bench)
    const ceilingS = await ceiling(plane)
    record(bench, {
      'ceiling s': round(ceilingS, 2),
      '× ceiling': round(Number(bench.figures['converged in s']) / ceilingS, 2),
    })
    const server = serverLatencyRows(await readServerLatencies(bench.transport), new Map(), [
      'configmaps',
      'benchparents',
    ])
    console.log('  API server, whole run:')
    for (const row of server)
      console.log(`    ${row.key}: ${row.count} requests, mean ${row.meanMs.toFixed(1)} ms`)
    return bench.figures
  } finally {
    await tearDown(bench)
  }
}

if (!Number.isInteger(COUNT) || COUNT < 1) throw new Error('parents must be a positive integer')
if (COUNT > LARGEST_DEFAULT_SIZE && process.env['BENCH_LARGE'] !== '1')
  throw new Error(`${COUNT} parents is opt-in (it runs for many minutes): set BENCH_LARGE=1`)
for (const dir of [CPU_PROF, HEAP_SNAPSHOT])
  if (dir !== undefined) mkdirSync(dir, { recursive: true })
console.log(
  `engine-process: ${COUNT} parents, ETag ${ETAG ? 'on' : 'off'}, ${WORKERS} workers; ` +
    `${new Date().toISOString()}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at start`
)
console.log(`engine-process: ${ensureFreshBuild(ROOT)}`)
const workDir = mkdtempSync(join(tmpdir(), 'bench-engine-process-'))
const plane = await startBenchPlane()
try {
  const figures = await run(plane, workDir)
  console.log('\nengine-process summary')
  console.log('| figure | value |\n|---|---|')
  for (const [key, value] of Object.entries(figures)) console.log(`| ${key} | ${String(value)} |`)
  console.log(`ENGINE_PROCESS_JSON ${JSON.stringify(figures)}`)
  if (process.env['BENCH_KEEP_LOGS'] !== '1') rmSync(workDir, { recursive: true, force: true })
  else console.log(`engine logs kept in ${workDir}`)
} catch (error) {
  console.log(`engine logs kept in ${workDir}`)
  throw error
} finally {
  await plane.stop()
}
