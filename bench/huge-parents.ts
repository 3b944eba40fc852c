// 100,000 parents × 2 ConfigMap children: our compiled engine as one replica and as three sharded
// replicas, and upstream Metacontroller v4.17.2, each round on a fresh `--nodes 0` control plane
// whose API server and etcd limits are raised as a large cluster's are (bench/huge-plane.ts).
// Each round seeds N parents over N/500 namespaces (32 in flight) and the CompositeController (a
// webhook on 127.0.0.1 answering two ConfigMaps and a status), then spawns the engine; the clock
// runs from the spawn. Reported per round: converged (every parent's status at its generation
// and all 2N children exist, seen on the benchmark's own watches, checked every second), settled
// (the last hook call before 10 s without any, work queues empty), parents synced after 10 min,
// engine CPU and peak RSS per replica, the API server's and etcd's CPU over the round and peak RSS,
// etcd's database file and its bytes in use, and the load average sampled every 30 s.
// A round that has not converged after its cap stops and reports its rate (parents synced per
// second) instead: BENCH_CAP_S (3,600 s) for ours, BENCH_UPSTREAM_CAP_S (600 s) for upstream.
//
//   [BENCH_LARGE=1] nice -n 5 node --import tsx bench/huge-parents.ts [parents=1000] [rounds=1,3,upstream]
//
// Sizes above 3,000 are opt-in with BENCH_LARGE=1 (`make bench-huge` runs 100,000).
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { COMPOSITE_CONTROLLERS } from '../src/kube/well-known-resources.js'
import { Informer, stripManagedFields } from '../src/runtime/informers/informer.js'
import { dynamicListWatcher } from '../src/runtime/informers/list-watcher.js'
import type { ControlPlane } from '../src/testing/index.js'
import { CONFIGMAPS, createNamespace, mib, runBounded } from './bench-cluster.js'
import type { BenchWebhook } from './bench-parents.js'
import {
  PARENTS,
  benchParent,
  controllerSpec,
  parentSynced,
  serveWebhook,
} from './bench-parents.js'
import { ensureFreshBuild } from './engine-process-handle.js'
import { startOurs, startUpstream } from './huge-engines.js'
import { createRetrying } from './huge-retry.js'
import type { HugeEngine } from './huge-engines.js'
import { etcdInUseBytes, readPlane, startHugePlane } from './huge-plane.js'
import type { PlaneReading } from './huge-plane.js'

const parents = Number(process.argv[2] ?? '1000')
const rounds = (process.argv[3] ?? '1,3,upstream').split(',')
const capMs = 1000 * Number(process.env['BENCH_CAP_S'] ?? '3600')
const upstreamCapMs = 1000 * Number(process.env['BENCH_UPSTREAM_CAP_S'] ?? '600')
const namespaceCount = Math.max(3, Math.ceil(parents / 500))
/** When the like-for-like figure "synced after 10 minutes" is read. */
const TEN_MINUTES_MS = 600_000
/** Hook silence that marks a round settled. */
const QUIET_MS = 10_000
if (!Number.isInteger(parents) || parents < 1) {
  console.error(`parents must be a positive integer, not "${process.argv[2] ?? ''}"`)
  process.exit(2)
}
if (parents > 3000 && process.env['BENCH_LARGE'] !== '1') {
  console.error('sizes above 3,000 parents need BENCH_LARGE=1')
  process.exit(2)
}
for (const round of rounds)
  if (!['upstream', '1', '2', '3', '4'].includes(round)) {
    console.error(`a round is a replica count (1 to 4) or "upstream", not "${round}"`)
    process.exit(2)
  }
const root = process.cwd()
const logDir = mkdtempSync(join(tmpdir(), 'bench-huge-'))
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Parents synced and children of the controller in the cluster, from the benchmark's watches. */
class Progress {
  readonly #parents: Informer
  readonly #children: Informer

  constructor(plane: ControlPlane) {
    const watch = (ref: typeof PARENTS, labelSelector?: string): Informer =>
      new Informer(
        dynamicListWatcher(plane.client, ref, labelSelector === undefined ? {} : { labelSelector }),
        { transform: stripManagedFields }
      )
    this.#parents = watch(PARENTS)
    this.#children = watch(CONFIGMAPS, 'controller-uid')
  }

  async start(): Promise<void> {
    this.#parents.start()
    this.#children.start()
    await Promise.all([this.#parents.waitForSync(), this.#children.waitForSync()])
  }

  now(): { synced: number; children: number } {
    const synced = this.#parents.store.list().filter(parentSynced).length
    return { synced, children: this.#children.store.size }
  }

  async stop(): Promise<void> {
    await Promise.all([this.#parents.stop(), this.#children.stop()])
  }
}

/** The 1-minute load average, sampled while a round runs. */
class LoadSampler {
  readonly #values: number[] = []
  readonly #timer = setInterval(() => {
    this.#take()
  }, 30_000)

  constructor() {
    this.#take()
  }

  #take(): void {
    this.#values.push(loadavg()[0] ?? 0)
  }

  /** "min / mean / max" of the samples; stops sampling. */
  summary(): string {
    clearInterval(this.#timer)
    this.#take()
    const mean = this.#values.reduce((a, b) => a + b, 0) / this.#values.length
    return [Math.min(...this.#values), mean, Math.max(...this.#values)]
      .map((v) => v.toFixed(1))
      .join(' / ')
  }
}

/** Creates the namespaces, N parents round-robin over them (32 in flight) and the controller. */
async function seed(plane: ControlPlane, hookUrl: string): Promise<number> {
  const started = performance.now()
  const namespaces: string[] = []
  for (let i = 0; i < namespaceCount; i++)
    namespaces.push(await createNamespace(plane.client, `bh-${randomBytes(4).toString('hex')}`))
  await runBounded(parents, 32, (i) =>
    createRetrying(() =>
      plane.client.create(PARENTS, benchParent(`p${i}`, namespaces[i % namespaceCount] ?? '', 1))
    )
  )
  await plane.client.create(COMPOSITE_CONTROLLERS, {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name: 'bench-huge' },
    spec: controllerSpec(hookUrl),
  })
  return performance.now() - started
}

/** How far a round's engine got: converged after ms, or the synced count at the cap. */
interface Outcome {
  readonly convergedMs: number | undefined
  readonly elapsedMs: number
  readonly synced: number
  readonly syncedAt10Min: number | undefined
}

/** Polls every second until every parent is synced and all children exist, or the cap. */
async function converge(progress: Progress, spawnedMs: number, cap: number): Promise<Outcome> {
  let syncedAt10Min: number | undefined
  let lastLogMs = spawnedMs
  for (;;) {
    const { synced, children } = progress.now()
    const elapsedMs = performance.now() - spawnedMs
    if (syncedAt10Min === undefined && elapsedMs >= TEN_MINUTES_MS) syncedAt10Min = synced
    if (synced >= parents && children >= 2 * parents)
      return { convergedMs: elapsedMs, elapsedMs, synced, syncedAt10Min }
    if (elapsedMs >= cap) return { convergedMs: undefined, elapsedMs, synced, syncedAt10Min }
    if (performance.now() - lastLogMs >= 60_000) {
      lastLogMs = performance.now()
      console.log(`  ${seconds(elapsedMs)}: ${synced} synced, ${children} children`)
    }
    await sleep(1000)
  }
}

/**
 * Ms from the spawn to the last hook call before {@link QUIET_MS} without any while every work
 * queue is empty (queues not exposed count as empty); at most 10 minutes of waiting.
 */
async function settle(engine: HugeEngine, hook: BenchWebhook, spawnedMs: number): Promise<number> {
  let calls = hook.counts.requests
  let lastCallMs = performance.now()
  const deadline = performance.now() + 600_000
  while (performance.now() < deadline) {
    await sleep(500)
    if (hook.counts.requests !== calls) {
      calls = hook.counts.requests
      lastCallMs = performance.now()
      continue
    }
    if (performance.now() - lastCallMs < QUIET_MS) continue
    if (((await engine.queueDepth()) ?? 0) === 0) break
  }
  return lastCallMs - spawnedMs
}

/** Starts the round's engine: a replica count, or upstream. */
function startEngine(plane: ControlPlane, round: string, index: number): Promise<HugeEngine> {
  const logPrefix = join(logDir, `${index}-${round}`)
  return round === 'upstream'
    ? startUpstream(plane, logPrefix)
    : startOurs(plane, Number(round), root, logPrefix)
}

/** The table cells of a round, from its outcome and readings. */
function cells(
  engine: HugeEngine,
  outcome: Outcome,
  settledMs: number | undefined,
  before: PlaneReading,
  after: PlaneReading & { readonly etcdInUseBytes: number }
): string[] {
  const samples = engine.samples()
  const each = (value: (s: (typeof samples)[number]) => string): string =>
    samples.map(value).join(' / ')
  const rate = (outcome.synced / (outcome.elapsedMs / 1000)).toFixed(1)
  return [
    engine.label,
    outcome.convergedMs === undefined
      ? `not after ${seconds(outcome.elapsedMs)}: ${outcome.synced} synced`
      : seconds(outcome.convergedMs),
    settledMs === undefined ? '–' : seconds(settledMs),
    String(outcome.syncedAt10Min ?? '–'),
    rate,
    each((s) => (s.cpuMs / 1000).toFixed(1)),
    each((s) => mib(s.peakRssBytes)),
    ((after.apiServerCpuMs - before.apiServerCpuMs) / 1000).toFixed(1),
    mib(after.apiServerPeakRssBytes),
    ((after.etcdCpuMs - before.etcdCpuMs) / 1000).toFixed(1),
    mib(after.etcdPeakRssBytes),
    `${mib(after.etcdDbBytes)} (${mib(after.etcdInUseBytes)} in use)`,
  ]
}

/** One round on a fresh plane; returns its table cells (load average and seeding first). */
async function round(name: string, index: number): Promise<string[]> {
  const plane = await startHugePlane()
  const hook = await serveWebhook()
  const progress = new Progress(plane)
  let engine: HugeEngine | undefined
  try {
    const seedMs = await seed(plane, hook.url)
    console.log(`  seeded ${parents} parents in ${seconds(seedMs)}`)
    await progress.start()
    const load = new LoadSampler()
    const before = readPlane(plane)
    const spawnedMs = performance.now()
    engine = await startEngine(plane, name, index)
    const outcome = await converge(progress, spawnedMs, name === 'upstream' ? upstreamCapMs : capMs)
    console.log(
      `  converged: ${outcome.convergedMs === undefined ? 'no' : seconds(outcome.convergedMs)}`
    )
    const settledMs =
      outcome.convergedMs === undefined ? undefined : await settle(engine, hook, spawnedMs)
    const after = { ...readPlane(plane), etcdInUseBytes: await etcdInUseBytes(plane) }
    const row = cells(engine, outcome, settledMs, before, after)
    return [row[0] ?? '', load.summary(), seconds(seedMs), ...row.slice(1)]
  } finally {
    await progress.stop()
    await engine?.stop()
    await hook.close()
    await plane.stop()
  }
}

console.log(ensureFreshBuild(root))
console.log(
  `${parents} parents over ${namespaceCount} namespaces, rounds ${rounds.join(', ')}; logs in ${logDir}; load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`
)
const header =
  '| engine | load avg min / mean / max | seeding | converged | settled | synced after 10 min | parents synced / s | engine CPU s (per replica) | engine peak RSS MiB (per replica) | API server CPU s | API server peak RSS MiB | etcd CPU s | etcd peak RSS MiB | etcd db MiB |'
const rows: string[] = []
for (const [index, name] of rounds.entries()) {
  const started = new Date().toISOString().slice(11, 16)
  console.log(`round ${name} at ${started} UTC`)
  const row = `| ${(await round(name, index)).join(' | ')} |`
  console.log(row)
  rows.push(row)
}
console.log(`\n${header}\n${header.replace(/[^|]+/g, '---')}\n${rows.join('\n')}`)
