import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { messageOf } from '../core/message-of.js'

/** What to start: a binary, its flags and the file its output goes to. */
export interface ProcessSpec {
  /** Component name for messages, e.g. `kube-apiserver`. */
  readonly name: string
  readonly command: string
  readonly args: readonly string[]
  readonly logFile: string
  /** Variables added to (or overriding) this process's environment. */
  readonly env?: Readonly<Record<string, string>>
  /**
   * What to run instead, when a wrapper sets something up and then execs `command args…` in the
   * same process (so its pid and argv[0] are still the ones `command` names).
   */
  readonly launch?: { readonly command: string; readonly args: readonly string[] }
}

/** Returns the last `lines` lines of a log file, or a note that it cannot be read. */
export function logTail(path: string, lines = 25): string {
  try {
    const text = readFileSync(path, 'utf8').trimEnd()
    return text.split('\n').slice(-lines).join('\n')
  } catch (error) {
    return `(cannot read ${path}: ${messageOf(error)})`
  }
}

/** Tells whether a pid is alive and still runs `command` (so a recycled pid is never signalled). */
export function isProcessRunning(pid: number, command?: string): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  if (command === undefined) return true
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]
    return argv0 === command
  } catch {
    // No /proc (not Linux): the liveness check above is all we have.
    return true
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    // Negative pid: the process group we created with `detached: true`, so helpers die too.
    process.kill(-pid, signal)
  } catch {
    try {
      process.kill(pid, signal)
    } catch {
      // Already gone.
    }
  }
}

/**
 * Stops a process group we started: SIGTERM, then SIGKILL after `graceMs`.
 *
 * @remarks
 * **Guarantees** Only signals `pid` when it still runs `command`, so a stale state file can never
 * end an unrelated process that reused the pid.
 */
export async function stopProcess(pid: number, command: string, graceMs = 20_000): Promise<void> {
  if (!isProcessRunning(pid, command)) return
  signalGroup(pid, 'SIGTERM')
  const deadline = Date.now() + graceMs
  while (Date.now() < deadline) {
    if (!isProcessRunning(pid, command)) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  signalGroup(pid, 'SIGKILL')
  while (isProcessRunning(pid, command)) {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** A child process started in its own process group with its output in a log file. */
export class ManagedProcess {
  readonly spec: ProcessSpec
  readonly pid: number
  readonly #child: ChildProcess
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined
  readonly #exited: Promise<void>

  private constructor(spec: ProcessSpec, child: ChildProcess, pid: number) {
    this.spec = spec
    this.#child = child
    this.pid = pid
    this.#exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#exit = { code, signal }
        resolve()
      })
    })
  }

  /**
   * Starts the process detached (own process group), appending its output to `spec.logFile`.
   *
   * @param background - Unreference the child so this Node process can exit while it runs on.
   */
  static start(spec: ProcessSpec, background = false): ManagedProcess {
    const fd = openSync(spec.logFile, 'a')
    try {
      const launch = spec.launch ?? spec
      const child = spawn(launch.command, [...launch.args], {
        detached: true,
        stdio: ['ignore', fd, fd],
        ...(spec.env === undefined ? {} : { env: { ...process.env, ...spec.env } }),
      })
      if (child.pid === undefined) {
        throw new Error(`cannot start ${spec.name} (${spec.command})`)
      }
      if (background) child.unref()
      return new ManagedProcess(spec, child, child.pid)
    } finally {
      closeSync(fd)
    }
  }

  /** How the process ended, or `undefined` while it runs. */
  get exitStatus(): string | undefined {
    if (this.#exit === undefined) return undefined
    return this.#exit.signal === null ? `exit code ${String(this.#exit.code)}` : this.#exit.signal
  }

  /** Sends SIGKILL to the group at once; for `process.on('exit')`, where nothing can be awaited. */
  killNow(): void {
    if (this.#exit === undefined) signalGroup(this.pid, 'SIGKILL')
  }

  /** Stops the process: SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  async stop(graceMs = 20_000): Promise<void> {
    if (this.#exit !== undefined) return
    signalGroup(this.pid, 'SIGTERM')
    const timer = setTimeout(() => {
      signalGroup(this.pid, 'SIGKILL')
    }, graceMs)
    await this.#exited
    clearTimeout(timer)
    this.#child.removeAllListeners()
  }
}
