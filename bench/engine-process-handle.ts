// The compiled engine (`node bin/metactl.js run`) as a child process of a benchmark: spawned with
// its metrics and health endpoints on free local ports, sampled from /proc every 250 ms (RSS, peak
// RSS, CPU), its `/metrics` scraped for API requests, and stopped by its own pid only.
import { execFileSync, spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { openSync, readdirSync, readFileSync, statSync, closeSync } from 'node:fs'
import { join } from 'node:path'
import { findFreePort } from '../src/testing/index.js'

/** One reading of the engine process from /proc. */
export interface EngineSample {
  /** Resident set size now (`VmRSS`). */
  readonly rssBytes: number
  /** Peak resident set size since the process started (`VmHWM`). */
  readonly peakRssBytes: number
  /** User plus system CPU time since the process started. */
  readonly cpuMs: number
}

/** API requests the engine made so far, from `rest_client_requests_total`. */
export interface RequestCounts {
  readonly total: number
  /** Everything but GET (watches and lists are GETs). */
  readonly writes: number
  readonly byMethod: Readonly<Record<string, number>>
}

/** How a stopped engine ended. */
export interface EngineExit {
  readonly code: number | null
  readonly signal: string | null
  readonly stopMs: number
  /** False when it had to be killed (SIGKILL) after 30 s. */
  readonly clean: boolean
}

const CLOCK_TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100

/** Reads VmRSS, VmHWM and utime + stime of `pid`; undefined once the process is gone. */
export function readProc(pid: number): EngineSample | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kib = (field: string): number =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name, which may hold spaces: state is field 3, utime 14, stime 15.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(rest[11]) + Number(rest[12])
    return {
      rssBytes: kib('VmRSS'),
      peakRssBytes: kib('VmHWM'),
      cpuMs: (ticks * 1000) / CLOCK_TICKS_PER_S,
    }
  } catch {
    return undefined
  }
}

/** Sums `rest_client_requests_total` of a Prometheus text page by method. */
export function parseRequestCounts(text: string): RequestCounts {
  const byMethod: Record<string, number> = {}
  let total = 0
  let writes = 0
  for (const line of text.split('\n')) {
    if (!line.startsWith('rest_client_requests_total{')) continue
    const method = /method="([^"]*)"/.exec(line)?.[1] ?? '?'
    const value = Number(line.slice(line.lastIndexOf(' ') + 1))
    byMethod[method] = (byMethod[method] ?? 0) + value
    total += value
    if (method !== 'GET') writes += value
  }
  return { total, writes, byMethod }
}

/** Sum and count of each histogram (`<name>_sum`, `<name>_count`) of a Prometheus text page. */
export type HistogramTotals = Map<string, { sum: number; count: number }>

/**
 * Reads the histograms and counters named in `names`, labels summed except `verb` or `result`
 * (kept as `name verb`); a counter's value is its `sum` with no count.
 */
export function parseHistograms(text: string, names: readonly string[]): HistogramTotals {
  const out: HistogramTotals = new Map()
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)_(sum|count|total)(\{[^}]*\})? (\S+)$/.exec(line)
    if (match === null || !names.includes(match[1] ?? '')) continue
    // Counters (`_total`) count per result; histograms per verb.
    const verb = /(?:verb|result)="([^"]*)"/.exec(match[3] ?? '')?.[1]
    const key = verb === undefined ? (match[1] ?? '') : `${match[1] ?? ''} ${verb}`
    const entry = out.get(key) ?? { sum: 0, count: 0 }
    if (match[2] === 'sum' || match[2] === 'total') entry.sum += Number(match[4])
    else entry.count += Number(match[4])
    out.set(key, entry)
  }
  return out
}

/** Subtracts request counts: what happened between two scrapes. */
export function requestsSince(after: RequestCounts, before: RequestCounts): RequestCounts {
  const byMethod: Record<string, number> = {}
  for (const [method, value] of Object.entries(after.byMethod))
    byMethod[method] = value - (before.byMethod[method] ?? 0)
  return { total: after.total - before.total, writes: after.writes - before.writes, byMethod }
}

/**
 * Builds dist/ unless it is newer than every compiled source file, and says which it did: the
 * benchmark measures the code users run, so a stale dist/ would measure the wrong engine.
 */
export function ensureFreshBuild(root: string): string {
  const newest = (dir: string): { file: string; ms: number } => {
    let best = { file: '', ms: 0 }
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      const candidate = entry.isDirectory()
        ? newest(path)
        : entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')
          ? { file: path, ms: statSync(path).mtimeMs }
          : best
      if (candidate.ms > best.ms) best = candidate
    }
    return best
  }
  const source = newest(join(root, 'src'))
  let built = 0
  try {
    built = statSync(join(root, 'dist/cli/main.js')).mtimeMs
  } catch {
    // No dist/ yet: built stays 0 and the build below runs.
  }
  if (built > source.ms) return `dist/ is fresh (built after the newest source, ${source.file})`
  const started = performance.now()
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' })
  return `dist/ was older than ${source.file}: ran npm run build (${((performance.now() - started) / 1000).toFixed(1)} s)`
}

/** Options of {@link EngineProcess.start}. */
export interface EngineProcessOptions {
  readonly root: string
  readonly kubeconfig: string
  /** Extra `metactl run` flags. */
  readonly args?: readonly string[]
  /** Extra `node` flags (profiling). */
  readonly nodeArgs?: readonly string[]
  /** File receiving the engine's stdout and stderr. */
  readonly logFile: string
  /** How long `/readyz` may take to answer 200 (60 s; initial lists of 100,000 parents take longer). */
  readonly readyTimeoutMs?: number
}

/** A running `node bin/metactl.js run`. */
export class EngineProcess {
  readonly pid: number
  readonly metricsPort: number
  readonly startedMs: number
  readonly #child: ChildProcess
  readonly #exited: Promise<{ code: number | null; signal: string | null }>
  readonly #sampler: NodeJS.Timeout
  #last: EngineSample = { rssBytes: 0, peakRssBytes: 0, cpuMs: 0 }

  private constructor(child: ChildProcess, metricsPort: number) {
    if (child.pid === undefined) throw new Error('the engine did not start')
    this.pid = child.pid
    this.#child = child
    this.metricsPort = metricsPort
    this.startedMs = performance.now()
    this.#exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        resolve({ code, signal })
      })
    })
    this.#sampler = setInterval(() => {
      this.#last = readProc(this.pid) ?? this.#last
    }, 250)
  }

  /** Spawns the engine and waits until `/readyz` answers 200 (its caches synced). */
  static async start(options: EngineProcessOptions): Promise<EngineProcess> {
    const metricsPort = await findFreePort()
    const healthPort = await findFreePort()
    const log = openSync(options.logFile, 'a')
    const child = spawn(
      process.execPath,
      [
        ...(options.nodeArgs ?? []),
        join(options.root, 'bin/metactl.js'),
        'run',
        `--kubeconfig=${options.kubeconfig}`,
        `--metrics-address=127.0.0.1:${metricsPort}`,
        `--health-probe-bind-address=127.0.0.1:${healthPort}`,
        ...(options.args ?? []),
      ],
      { cwd: options.root, stdio: ['ignore', log, log] }
    )
    closeSync(log)
    const engine = new EngineProcess(child, metricsPort)
    const deadline = performance.now() + (options.readyTimeoutMs ?? 60_000)
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${healthPort}/readyz`).then(
        (r) => r.status === 200,
        () => false
      )
      if (ready) break
      if (performance.now() > deadline || child.exitCode !== null) {
        await engine.stop()
        throw new Error(`the engine did not become ready; see ${options.logFile}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    return engine
  }

  /** The latest /proc reading, taken now. */
  sample(): EngineSample {
    this.#last = readProc(this.pid) ?? this.#last
    return this.#last
  }

  /** Scrapes `/metrics` for the API requests made so far. */
  async requests(): Promise<RequestCounts> {
    const response = await fetch(`http://127.0.0.1:${this.metricsPort}/metrics`)
    return parseRequestCounts(await response.text())
  }

  /** Scrapes `/metrics` for the histograms named (see {@link parseHistograms}). */
  async histograms(names: readonly string[]): Promise<HistogramTotals> {
    const response = await fetch(`http://127.0.0.1:${this.metricsPort}/metrics`)
    return parseHistograms(await response.text(), names)
  }

  /** Sends a signal to this process (by its pid). */
  signal(name: NodeJS.Signals): void {
    process.kill(this.pid, name)
  }

  /** SIGTERM, then waits up to 30 s for a clean exit before SIGKILL. */
  async stop(): Promise<EngineExit> {
    clearInterval(this.#sampler)
    const started = performance.now()
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.signal('SIGTERM')
    const timeout = new Promise<undefined>((resolve) =>
      setTimeout(() => {
        resolve(undefined)
      }, 30_000).unref()
    )
    const exit = await Promise.race([this.#exited, timeout])
    if (exit !== undefined)
      return { ...exit, stopMs: performance.now() - started, clean: exit.code === 0 }
    this.signal('SIGKILL')
    const killed = await this.#exited
    return { ...killed, stopMs: performance.now() - started, clean: false }
  }
}
