// `metactl dev` as a user runs it, from a test: a project directory that links metacontroller-ts
// and tsx to this checkout (no install), the CLI started from the sources in that directory, and
// its output (stdout and stderr, in arrival order) to wait on.
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, symlinkSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { waitFor } from '../../src/runtime/clock/index.js'

const REPO = resolve('.')

/** Gives `project` a node_modules with this checkout as metacontroller-ts and its tsx. */
export function linkProjectModules(project: string): void {
  const modules = join(project, 'node_modules')
  if (existsSync(join(modules, 'tsx'))) return
  mkdirSync(modules, { recursive: true })
  symlinkSync(REPO, join(modules, 'metacontroller-ts'))
  symlinkSync(join(REPO, 'node_modules', 'tsx'), join(modules, 'tsx'))
}

/** A running `metactl dev`. */
export interface DevProcess {
  readonly child: ChildProcess
  /** Everything printed so far. */
  output(): string
  /** Waits for a line matching `pattern` printed after `from` characters; returns it. */
  line(pattern: RegExp, description: string, from?: number, timeoutMs?: number): Promise<string>
  /** SIGTERM, as Ctrl-C; resolves with the exit code and signal. */
  stop(): Promise<[number | null, NodeJS.Signals | null]>
}

/** Starts `metactl dev ...args` in `project`. */
export function startDev(project: string, args: readonly string[]): DevProcess {
  let output = ''
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(REPO, 'src/cli/main.ts'), 'dev', ...args],
    { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] }
  )
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  // A dev that exits ends every wait at once, with its output as the reason.
  const exited = new AbortController()
  child.once('exit', (code) => {
    exited.abort(new Error(`metactl dev exited (${String(code)}); its output:\n${output}`))
  })
  const line = async (
    pattern: RegExp,
    description: string,
    from = 0,
    timeoutMs = 60_000
  ): Promise<string> => {
    let found: string | undefined
    await waitFor(
      () => {
        found = output
          .slice(from)
          .split('\n')
          .find((l) => pattern.test(l))
        return found !== undefined
      },
      {
        timeoutMs,
        signal: exited.signal,
        description: `${description}; output so far:\n${output}`,
      }
    )
    return found ?? ''
  }
  const stop = async (): Promise<[number | null, NodeJS.Signals | null]> => {
    if (child.exitCode !== null) return [child.exitCode, child.signalCode]
    const done = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
    child.kill('SIGTERM')
    return done
  }
  return { child, output: () => output, line, stop }
}
