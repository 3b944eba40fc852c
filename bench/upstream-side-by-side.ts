// Ours against upstream Metacontroller, side by side: the compiled engine (`node bin/metactl.js
// run`) and upstream's binary built from source (tools/upstream/build.sh), each serving the same
// CompositeController (a webhook giving every BenchParent two ConfigMaps and a status) over N
// parents created at 16 in flight, each run on a fresh control plane (`--nodes 0`). Runs go in
// rounds; each round runs every engine once and starts with the next one, so none always runs
// first. Reported per run: time from the first create until every parent is synced and every
// child exists, the engine's peak RSS (`VmHWM`), its RSS and CPU then (from /proc every 250 ms),
// its hook calls, the CPU of the API server, etcd and this process meanwhile, and how busy the
// machine was; the engine's and the API server's /metrics are kept beside the engine's log. The
// clock starts once the machine is quiet (at most 15 % busy for a second, after at most 60 s). Per
// round, each engine's ratios to upstream; then medians per engine.
//
//   npm run build && tools/upstream/build.sh     # or set METACTL_UPSTREAM_BIN
//   node --import tsx bench/upstream-side-by-side.ts [parents=1000] [rounds=3]
//
// Both run with 5 workers and a client limit of 1000 qps, burst 2000 (upstream's defaults are
// 5 and 10, which would measure its rate limiter, not its engine). BENCH_ENGINE_NODE_ARGS gives
// node flags to ours; BENCH_OURS_VARIANTS adds more of ours, each with its own node flags
// (`;`-separated, e.g. `--max-semi-space-size=1;--optimize-for-size`), to measure V8 settings;
// BENCH_SKIP_UPSTREAM=1 leaves upstream out (ratios are then to plain ours).
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { homedir, loadavg, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { KubeObject } from '../src/core/kube-object.js'
import { DynamicClient } from '../src/kube/dynamic-client.js'
import { KubeTransport } from '../src/kube/kube-transport.js'
import { COMPOSITE_CONTROLLERS } from '../src/kube/well-known-resources.js'
import { Informer, stripManagedFields } from '../src/runtime/informers/informer.js'
import { dynamicListWatcher } from '../src/runtime/informers/list-watcher.js'
import { findFreePort } from '../src/testing/index.js'
import type { ControlPlane } from '../src/testing/index.js'
import { CONFIGMAPS, createNamespace, mib, runBounded } from './bench-cluster.js'
import {
  benchParent,
  controllerSpec,
  parentSynced,
  PARENTS,
  serveWebhook,
  startBenchPlane,
} from './bench-parents.js'
import { ensureFreshBuild, readProc } from './engine-process-handle.js'
import { readPlane } from './huge-plane.js'
import type { PlaneReading } from './huge-plane.js'
import type { EngineSample } from './engine-process-handle.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const COUNT = Number(process.argv[2] ?? 1000)
/** Rounds: each runs every engine once, in an order rotated by one per round. */
const PAIRS = Number(process.argv[3] ?? 3)
/** Where tools/upstream/build.sh puts upstream's binary. */
const UPSTREAM_BIN =
  process.env['METACTL_UPSTREAM_BIN'] ??
  join(homedir(), '.cache/metacontroller-ts/upstream-metacontroller-v4.17.2/metacontroller')
const LIMITS = ['--workers=5', '--client-go-qps=1000', '--client-go-burst=2000']

/** One engine under test: ours (with node flags) or upstream. */
interface EngineSpec {
  readonly label: string
  readonly kind: 'ours' | 'upstream'
  /** Node flags of ours. */
  readonly nodeArgs: readonly string[]
}

const words = (text: string): string[] => text.split(' ').filter((a) => a !== '')
/** Ours as configured, each variant of BENCH_OURS_VARIANTS, then upstream. */
const ENGINES: readonly EngineSpec[] = [
  { label: 'ours', kind: 'ours', nodeArgs: words(process.env['BENCH_ENGINE_NODE_ARGS'] ?? '') },
  ...(process.env['BENCH_OURS_VARIANTS'] ?? '')
    .split(';')
    .filter((v) => v.trim() !== '')
    .map((v) => ({ label: `ours ${v.trim()}`, kind: 'ours' as const, nodeArgs: words(v) })),
  ...(process.env['BENCH_SKIP_UPSTREAM'] === '1'
    ? []
    : [{ label: 'upstream', kind: 'upstream' as const, nodeArgs: [] }]),
]

/** One engine run's figures. */
interface RunFigures {
  readonly which: string
  readonly convergedS: number
  readonly peakRssMiB: number
  readonly rssMiB: number
  readonly cpuS: number
  readonly startRssMiB: number
  /** Sync hook calls the engine made until it converged. */
  readonly hookCalls: number
  /** CPU of the API server and etcd, and of this process (hook, informers, creates) meanwhile. */
  readonly planeCpuS: number
  readonly benchCpuS: number
  /** Share of the machine's CPU time (all cores) that was busy meanwhile, from /proc/stat. */
  readonly machineBusy: number
  /** Seconds waited for a quiet machine before the first create. */
  readonly quietWaitS: number
}

/** The machine's CPU time so far in clock ticks: all of it, and the idle part (idle + iowait). */
function machineTicks(): { total: number; idle: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number)
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0)
  return { total, idle: (fields[3] ?? 0) + (fields[4] ?? 0) }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN

/** A machine at most this busy over a second counts as quiet (the plane's own upkeep). */
const QUIET_BUSY = 0.15

/**
 * Waits until the machine is quiet for a whole second, for at most 60 s; returns the seconds it
 * waited. A fresh plane keeps the API server busy for a while (the CRD's OpenAPI, the
 * controllers' first syncs...): starting the clock then made the API server's CPU for the same
 * writes move from 5 to 8 s between runs, and the converge time with it.
 */
async function awaitQuietMachine(): Promise<number> {
  const started = performance.now()
  for (;;) {
    const before = machineTicks()
    await sleep(1000)
    const after = machineTicks()
    const busy = 1 - (after.idle - before.idle) / Math.max(1, after.total - before.total)
    const waitedS = (performance.now() - started) / 1000
    if (busy <= QUIET_BUSY || waitedS >= 60) return waitedS
  }
}

/** Spawns one engine with its metrics and probes on free local ports; output to `logFile`. */
async function spawnEngine(
  engine: EngineSpec,
  kubeconfig: string,
  logFile: string
): Promise<{ child: ChildProcess; healthPort: number; metricsPort: number }> {
  const [metricsPort, healthPort] = [await findFreePort(), await findFreePort()]
  const ports = [
    `--metrics-address=127.0.0.1:${metricsPort}`,
    `--health-probe-bind-address=127.0.0.1:${healthPort}`,
  ]
  const [command, args] =
    engine.kind === 'ours'
      ? [
          process.execPath,
          [...engine.nodeArgs, join(ROOT, 'bin/metactl.js'), 'run', `--kubeconfig=${kubeconfig}`],
        ]
      : [UPSTREAM_BIN, [`--kubeconfig=${kubeconfig}`, '--zap-log-level=info']]
  const log = openSync(logFile, 'a')
  const child = spawn(command, [...args, ...ports, ...LIMITS], {
    cwd: ROOT,
    stdio: ['ignore', log, log],
  })
  closeSync(log)
  return { child, healthPort, metricsPort }
}

/** Waits until `/readyz` answers 200; throws after 60 s or if the process exits. */
async function awaitReady(child: ChildProcess, healthPort: number, logFile: string) {
  const deadline = performance.now() + 60_000
  for (;;) {
    const ready = await fetch(`http://127.0.0.1:${healthPort}/readyz`).then(
      (r) => r.status === 200,
      () => false
    )
    if (ready) return
    if (performance.now() > deadline || child.exitCode !== null)
      throw new Error(`the engine did not become ready; see ${logFile}`)
    await sleep(100)
  }
}

/** SIGTERM by pid, then SIGKILL after 30 s. */
async function stopEngine(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  await exited
  clearTimeout(timer)
}

/** The benchmark's own view of parents and children in `ns`. */
function startInformers(
  client: DynamicClient,
  ns: string
): { parents: Informer; children: Informer } {
  const informer = (ref: typeof PARENTS): Informer =>
    new Informer(dynamicListWatcher(client, ref, { namespace: ns }), {
      transform: stripManagedFields,
    })
  return { parents: informer(PARENTS), children: informer(CONFIGMAPS) }
}

/** Polls the engine's /proc every 250 ms until `done()`; returns the last sample. */
async function sampleUntil(pid: number, done: () => boolean): Promise<EngineSample> {
  let last = readProc(pid) ?? { rssBytes: 0, peakRssBytes: 0, cpuMs: 0 }
  const deadline = performance.now() + 3_600_000
  while (!done()) {
    if (performance.now() > deadline) throw new Error('no convergence within an hour')
    await sleep(250)
    last = readProc(pid) ?? last
  }
  return readProc(pid) ?? last
}

/** The figures of a run that {@link startMeter} measures from its start to convergence. */
type MeteredFigures = Omit<RunFigures, 'which' | 'hookCalls' | 'quietWaitS'>

/** Starts the clock and the CPU counters of the engine `pid`, the plane and this process. */
function startMeter(pid: number, plane: ControlPlane): { read(end: EngineSample): MeteredFigures } {
  const start = readProc(pid) ?? { rssBytes: 0, peakRssBytes: 0, cpuMs: 0 }
  const planeStart = readPlane(plane)
  const benchStart = process.cpuUsage()
  const ticksStart = machineTicks()
  const started = performance.now()
  const planeCpuMs = (r: PlaneReading): number => r.apiServerCpuMs + r.etcdCpuMs
  return {
    read(end) {
      const convergedS = (performance.now() - started) / 1000
      const bench = process.cpuUsage(benchStart)
      const ticksEnd = machineTicks()
      const ticks = Math.max(1, ticksEnd.total - ticksStart.total)
      return {
        convergedS,
        peakRssMiB: Number(mib(end.peakRssBytes)),
        rssMiB: Number(mib(end.rssBytes)),
        cpuS: (end.cpuMs - start.cpuMs) / 1000,
        startRssMiB: Number(mib(start.rssBytes)),
        planeCpuS: (planeCpuMs(readPlane(plane)) - planeCpuMs(planeStart)) / 1000,
        benchCpuS: (bench.user + bench.system) / 1e6,
        machineBusy: 1 - (ticksEnd.idle - ticksStart.idle) / ticks,
      }
    },
  }
}

/**
 * Keeps the engine's and the API server's /metrics beside the engine's log: where a sync's time
 * went, and the API server's latency for the same requests without the client's queueing.
 */
async function keepMetrics(
  logFile: string,
  metricsPort: number,
  transport: KubeTransport
): Promise<void> {
  const unavailable = (e: unknown): string => `metrics unavailable: ${String(e)}`
  const engine = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(
    (r) => r.text(),
    unavailable
  )
  writeFileSync(logFile.replace(/\.log$/, '.metrics.txt'), engine)
  const apiServer = await transport
    .requestText({ method: 'GET', path: '/metrics' })
    .catch(unavailable)
  writeFileSync(logFile.replace(/\.log$/, '.apiserver-metrics.txt'), apiServer)
}

/** One run on a fresh control plane: start the engine, create N parents, wait, stop. */
async function runOnce(engine: EngineSpec, dir: string, index: number): Promise<RunFigures> {
  const plane: ControlPlane = await startBenchPlane()
  const transport = new KubeTransport(plane.config)
  const client = new DynamicClient(transport)
  const hook = await serveWebhook()
  const ns = await createNamespace(client, `side-by-side-${index}`)
  const controller: KubeObject = {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name: 'side-by-side' },
    spec: controllerSpec(hook.url),
  }
  await client.create(COMPOSITE_CONTROLLERS, controller)
  const { parents, children } = startInformers(client, ns)
  const logFile = join(dir, `${index}-${engine.label.replace(/[^\w.=-]+/g, '_')}.log`)
  const { child, healthPort, metricsPort } = await spawnEngine(
    engine,
    plane.kubeconfigPath,
    logFile
  )
  try {
    parents.start()
    children.start()
    await Promise.all([parents.waitForSync(), children.waitForSync()])
    await awaitReady(child, healthPort, logFile)
    // Ready means caches synced; the controller starts right after.
    await sleep(2000)
    const quietWaitS = await awaitQuietMachine()
    const pid = child.pid ?? 0
    const meter = startMeter(pid, plane)
    await runBounded(COUNT, 16, (i) => client.create(PARENTS, benchParent(`p-${i}`, ns, i)))
    const end = await sampleUntil(
      pid,
      () =>
        parents.store.list().filter(parentSynced).length >= COUNT &&
        children.store.list().length >= 2 * COUNT
    )
    const figures = { ...meter.read(end), hookCalls: hook.counts.requests }
    await keepMetrics(logFile, metricsPort, transport)
    return { which: engine.label, ...figures, quietWaitS }
  } finally {
    await stopEngine(child)
    await Promise.all([parents.stop(), children.stop()])
    await hook.close()
    await transport.close()
    await plane.stop()
  }
}

if (ENGINES.some((e) => e.kind === 'upstream') && !existsSync(UPSTREAM_BIN))
  throw new Error(`no upstream binary at ${UPSTREAM_BIN}: run tools/upstream/build.sh`)
console.log(ensureFreshBuild(ROOT))
const dir = mkdtempSync(join(tmpdir(), 'side-by-side-'))
console.log(
  `${COUNT} parents, ${PAIRS} rounds of ${ENGINES.map((e) => e.label).join(', ')}, logs in ${dir}; load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`
)
const runs: RunFigures[] = []
for (let round = 0; round < PAIRS; round++) {
  // Each round starts with the next engine, so none always runs first.
  const order = ENGINES.map((_, i) => ENGINES[(i + round) % ENGINES.length]) as EngineSpec[]
  const roundRuns: RunFigures[] = []
  for (const engine of order) {
    const figures = await runOnce(engine, dir, runs.length + roundRuns.length)
    roundRuns.push(figures)
    console.log(
      `round ${round + 1} ${engine.label}: converged ${figures.convergedS.toFixed(2)} s, peak RSS ` +
        `${figures.peakRssMiB} MiB, RSS ${figures.rssMiB} MiB (start ${figures.startRssMiB}), ` +
        `CPU ${figures.cpuS.toFixed(1)} s, ${figures.hookCalls} hook calls; API server and etcd CPU ` +
        `${figures.planeCpuS.toFixed(1)} s, benchmark CPU ${figures.benchCpuS.toFixed(1)} s, machine ${(100 * figures.machineBusy).toFixed(0)} % busy (quiet after ` +
        `${figures.quietWaitS.toFixed(0)} s); load ${(loadavg()[0] ?? 0).toFixed(1)}`
    )
  }
  runs.push(...roundRuns)
  const base =
    roundRuns.find((r) => r.which === 'upstream') ?? roundRuns.find((r) => r.which === 'ours')
  for (const r of roundRuns)
    if (base !== undefined && r !== base)
      console.log(
        `round ${round + 1} ${r.which} / ${base.which}: time ${(r.convergedS / base.convergedS).toFixed(2)}, ` +
          `peak RSS ${(r.peakRssMiB / base.peakRssMiB).toFixed(2)}, CPU ${(r.cpuS / base.cpuS).toFixed(2)}`
      )
}
for (const { label } of ENGINES) {
  const mine = runs.filter((r) => r.which === label)
  console.log(
    `${label} medians: converged ${median(mine.map((r) => r.convergedS)).toFixed(2)} s, peak RSS ` +
      `${median(mine.map((r) => r.peakRssMiB)).toFixed(1)} MiB, CPU ` +
      `${median(mine.map((r) => r.cpuS)).toFixed(1)} s`
  )
}
