// `metactl run` as a separate process, as a Deployment replica runs it: its JSON log lines, its
// metrics, its exit. Tests may SIGKILL the process they spawned, by pid.
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { request } from 'undici'
import { waitFor } from '../../src/testing/index.js'

/** A running `metactl run` child process. */
export interface SpawnedEngine {
  readonly process: ChildProcess
  /** Every JSON log line so far; `raw` holds lines that were not JSON. */
  readonly lines: Record<string, unknown>[]
  readonly raw: string[]
  /** Resolves with the exit code (or the signal's name). */
  readonly exited: Promise<number | string>
  /** Waits for a log line with this `msg`; resolves with it. */
  line(msg: string, timeoutMs?: number): Promise<Record<string, unknown>>
  /** The API writes (requests other than GET) this engine made, from its /metrics. */
  writes(): Promise<number>
  /** SIGKILLs the process if it still runs. */
  kill(): void
}

/**
 * Starts `metactl run --kubeconfig <kubeconfig> ...args` with metrics on a free loopback port;
 * `env` replaces the process environment it inherits.
 */
export function spawnEngine(
  kubeconfig: string,
  args: readonly string[],
  options: { readonly env?: NodeJS.ProcessEnv } = {}
): SpawnedEngine {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'src/cli/main.ts',
      'run',
      '--kubeconfig',
      kubeconfig,
      '--metrics-address',
      '127.0.0.1:0',
      '--health-probe-bind-address',
      '127.0.0.1:0',
      ...args,
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      ...(options.env === undefined ? {} : { env: options.env }),
    }
  )
  const lines: Record<string, unknown>[] = []
  const raw: string[] = []
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve(code ?? signal ?? -1)
    })
  })
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (text) => {
    try {
      lines.push(JSON.parse(text) as Record<string, unknown>)
    } catch {
      raw.push(text)
    }
  })
  const line = (msg: string, timeoutMs = 60_000): Promise<Record<string, unknown>> =>
    waitFor(() => lines.find((l) => l['msg'] === msg), {
      timeoutMs,
      intervalMs: 50,
      description: `the "${msg}" log line of pid ${String(child.pid)}`,
    })
  return {
    process: child,
    lines,
    raw,
    exited,
    line,
    writes: async () => {
      const address = (await line('serving metrics'))['address'] as string
      const response = await request(`http://${address}/metrics`)
      const text = await response.body.text()
      let writes = 0
      for (const match of text.matchAll(/^rest_client_requests_total\{([^}]*)\} (\d+)/gm)) {
        if (!(match[1] ?? '').includes('method="GET"')) writes += Number(match[2])
      }
      return writes
    },
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    },
  }
}
