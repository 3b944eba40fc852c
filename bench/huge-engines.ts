// The engines the 100,000-parent benchmark compares, behind one shape: ours (`node bin/metactl.js
// run`) as one replica or as a sharded ring of several, and upstream Metacontroller v4.17.2 built
// from source (tools/upstream/build.sh). Each is sampled from /proc (CPU, peak RSS) and its
// `/metrics` (work queue depth), and stopped by its own pid only.
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { closeSync, existsSync, openSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { findFreePort } from '../src/testing/index.js'
import type { ControlPlane } from '../src/testing/index.js'
import { EngineProcess, readProc } from './engine-process-handle.js'
import type { EngineSample } from './engine-process-handle.js'

/**
 * The limits both engines run with, as in bench/upstream-side-by-side.ts: 5 workers and a client
 * limit high enough (upstream's default is 5 qps, burst 10) to measure the engines, not it.
 */
export const ENGINE_LIMITS: readonly string[] = [
  '--workers=5',
  '--client-go-qps=1000',
  '--client-go-burst=2000',
]

/** Where tools/upstream/build.sh puts upstream's binary (METACTL_UPSTREAM_BIN overrides it). */
export const UPSTREAM_BIN =
  process.env['METACTL_UPSTREAM_BIN'] ??
  join(homedir(), '.cache/metacontroller-ts/upstream-metacontroller-v4.17.2/metacontroller')

/** One engine under test, however many processes it runs. */
export interface HugeEngine {
  readonly label: string
  /** One /proc reading per process (replica), taken now. */
  samples(): EngineSample[]
  /** Items waiting in every process's work queues; undefined when a process does not say. */
  queueDepth(): Promise<number | undefined>
  stop(): Promise<void>
}

/** Sum of a Prometheus metric's series on the page at `url`; undefined when absent. */
async function scrapeSum(url: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(url)).text()
  let sum: number | undefined
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      sum = (sum ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1))
  return sum
}

/** Sums the depths of several processes; undefined when any does not expose it. */
async function totalDepth(urls: readonly string[]): Promise<number | undefined> {
  const depths = await Promise.all(urls.map((url) => scrapeSum(url, 'workqueue_depth')))
  return depths.some((d) => d === undefined)
    ? undefined
    : depths.reduce<number>((a, b) => a + (b ?? 0), 0)
}

/**
 * Our engine: one replica, or `replicas` members of a sharded ring (`--sharding`, the default
 * `--shard-key=uid`, parents sharded server-side, children followed by their shard-bucket label).
 */
export async function startOurs(
  plane: ControlPlane,
  replicas: number,
  root: string,
  logPrefix: string
): Promise<HugeEngine> {
  const shardArgs = (id: string): string[] =>
    replicas === 1
      ? []
      : [
          '--sharding',
          '--sharding-namespace=default',
          '--sharding-ring=huge',
          `--sharding-identity=${id}`,
          '--sharding-server-side=true',
          // Longer than the defaults: a loaded 2-core machine listing 100,000 parents must not
          // make a replica miss its renewals.
          '--sharding-lease-duration=30s',
          '--sharding-renew-deadline=25s',
          '--sharding-retry-period=5s',
        ]
  const ids = Array.from({ length: replicas }, (_, i) => `r${i + 1}`)
  const engines = await Promise.all(
    ids.map((id) =>
      EngineProcess.start({
        root,
        kubeconfig: plane.kubeconfigPath,
        logFile: `${logPrefix}-${id}.log`,
        args: [...ENGINE_LIMITS, ...shardArgs(id)],
        // Ready waits for the initial lists: 100,000 parents on a loaded machine take minutes.
        readyTimeoutMs: 600_000,
      })
    )
  )
  const urls = engines.map((e) => `http://127.0.0.1:${e.metricsPort}/metrics`)
  return {
    label: replicas === 1 ? 'ours, 1 replica' : `ours, ${replicas} sharded replicas`,
    samples: () => engines.map((e) => e.sample()),
    queueDepth: () => totalDepth(urls),
    stop: async () => {
      for (const engine of engines) await engine.stop()
    },
  }
}

/** Upstream's binary with the same limits; resolves once its `/readyz` answers 200. */
export async function startUpstream(plane: ControlPlane, logPrefix: string): Promise<HugeEngine> {
  if (!existsSync(UPSTREAM_BIN))
    throw new Error(`no upstream binary at ${UPSTREAM_BIN}: run tools/upstream/build.sh`)
  const [metricsPort, healthPort] = [await findFreePort(), await findFreePort()]
  const log = openSync(`${logPrefix}-upstream.log`, 'a')
  const child = spawn(
    UPSTREAM_BIN,
    [
      `--kubeconfig=${plane.kubeconfigPath}`,
      `--metrics-address=127.0.0.1:${metricsPort}`,
      `--health-probe-bind-address=127.0.0.1:${healthPort}`,
      ...ENGINE_LIMITS,
    ],
    { stdio: ['ignore', log, log] }
  )
  closeSync(log)
  const stop = (): Promise<void> => stopChild(child)
  await awaitReady(child, healthPort).catch(async (error: unknown) => {
    await stop()
    throw error
  })
  const pid = child.pid ?? 0
  let last: EngineSample = { rssBytes: 0, peakRssBytes: 0, cpuMs: 0 }
  return {
    label: 'upstream v4.17.2',
    samples: () => [(last = readProc(pid) ?? last)],
    queueDepth: () => totalDepth([`http://127.0.0.1:${metricsPort}/metrics`]),
    stop,
  }
}

/** Waits until `/readyz` answers 200; throws after 10 minutes or if the process exits. */
async function awaitReady(child: ChildProcess, healthPort: number): Promise<void> {
  const deadline = performance.now() + 600_000
  for (;;) {
    const ready = await fetch(`http://127.0.0.1:${healthPort}/readyz`).then(
      (r) => r.status === 200,
      () => false
    )
    if (ready) return
    if (performance.now() > deadline || child.exitCode !== null)
      throw new Error('upstream did not become ready; see its log')
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** SIGTERM by pid, then SIGKILL after 30 s. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  await exited
  clearTimeout(timer)
}
