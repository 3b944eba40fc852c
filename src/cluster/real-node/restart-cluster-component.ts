/**
 * Kills one recorded process of a real node's cluster (the kubelet, containerd, kube-apiserver,
 * …) and starts it again as it ran: the same argv, environment and working directory, inside the
 * same network and mount namespaces, its output appended to the same log, and its new pid
 * recorded where `cluster down` reads it. What an operator's `systemctl restart kubelet` does to a
 * node, for the fault tests (test/operations/); the processes it did not name are left alone, so
 * containers and containerd's shims live on as they would on a node.
 *
 * @module
 */
import { readFileSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { readControlPlaneState, writeControlPlaneState } from '../control-plane-state.js'
import type { RecordedProcess } from '../control-plane-state.js'
import { isProcessRunning, ManagedProcess } from '../managed-process.js'
import { namespaceId } from './namespace-setup.js'
import { realNodeLayout } from './real-node-layout.js'
import { readRealNodeState, writeRealNodeState } from './real-node-state.js'

/** How {@link restartClusterComponent} stops the process. */
export interface RestartOptions {
  /** The signal sent to the process itself (not its group): default `SIGKILL`, a crash. */
  readonly signal?: 'SIGKILL' | 'SIGTERM'
  /** How long the component stays down before it starts again (default 0). */
  readonly downMs?: number
  /**
   * How long the process gets to exit after `signal` before it gets SIGKILL (default 20 s, as
   * the control plane's own stop gives it: kube-apiserver drains requests for up to a minute).
   */
  readonly graceMs?: number
}

/** What the restart did. */
export interface ComponentRestart {
  readonly name: string
  readonly oldPid: number
  readonly newPid: number
  /** The process outlived `signal` for `graceMs` and was killed with SIGKILL. */
  readonly forced: boolean
}

/** Raised when the component is not recorded, not running, or does not exit. */
export class ComponentRestartError extends Error {
  override readonly name = 'ComponentRestartError'
}

/** How a process ran, read from /proc before it is killed. */
export interface ProcessImage {
  readonly argv: readonly string[]
  readonly env: Readonly<Record<string, string>>
  readonly cwd: string
}

/** Splits a NUL-separated /proc file (`cmdline`, `environ`) into its entries. */
export function splitProcText(text: string): string[] {
  return text.split('\0').filter((entry) => entry !== '')
}

/** `NAME=value` entries as a record (the first `=` separates; a value may hold more). */
export function environmentOf(entries: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {}
  for (const entry of entries) {
    const at = entry.indexOf('=')
    if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1)
  }
  return env
}

/** The records with `name`'s pid replaced by `pid` (the others unchanged, in order). */
export function replacePid(
  processes: readonly RecordedProcess[],
  name: string,
  pid: number
): RecordedProcess[] {
  return processes.map((p) => (p.name === name ? { ...p, pid } : p))
}

/** Reads argv, environment and working directory of a running process. */
export function readProcessImage(pid: number): ProcessImage {
  return {
    argv: splitProcText(readFileSync(`/proc/${pid}/cmdline`, 'utf8')),
    env: environmentOf(splitProcText(readFileSync(`/proc/${pid}/environ`, 'utf8'))),
    cwd: readlinkSync(`/proc/${pid}/cwd`),
  }
}

// A live recorded process other than `victim` in the same network and mount namespaces: its
// /proc entry names those namespaces for nsenter once the victim is gone.
function namespaceAnchor(victim: RecordedProcess, all: readonly RecordedProcess[]): number {
  const net = namespaceId(victim.pid, 'net')
  const mnt = namespaceId(victim.pid, 'mnt')
  const anchor = all.find(
    (p) =>
      p.pid !== victim.pid &&
      isProcessRunning(p.pid, p.command) &&
      namespaceId(p.pid, 'net') === net &&
      namespaceId(p.pid, 'mnt') === mnt
  )
  if (anchor === undefined) {
    throw new ComponentRestartError(`no other process shares ${victim.name}'s namespaces`)
  }
  return anchor.pid
}

// Resolves once the process has exited, or false after `timeoutMs`.
async function exited(proc: RecordedProcess, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (isProcessRunning(proc.pid, proc.command)) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return true
}

// Sends `signal`, then SIGKILL after `graceMs`; resolves with whether SIGKILL was needed, throws
// when even that leaves it running.
async function stopOnly(
  proc: RecordedProcess,
  signal: NodeJS.Signals,
  graceMs: number
): Promise<boolean> {
  process.kill(proc.pid, signal)
  if (await exited(proc, graceMs)) return false
  process.kill(proc.pid, 'SIGKILL')
  if (!(await exited(proc, 10_000))) {
    throw new ComponentRestartError(`${proc.name} (pid ${proc.pid}) did not exit`)
  }
  return true
}

// Where the process is recorded: the node's state file or the control plane's, and how to
// write the new pid back.
function findRecord(
  dir: string,
  name: string
): { proc: RecordedProcess; all: RecordedProcess[]; record: (pid: number) => void } {
  const layout = realNodeLayout(dir)
  const node = readRealNodeState(layout.stateFile)
  const plane = readControlPlaneState(dir)
  const all = [...(node?.processes ?? []), ...(plane?.processes ?? [])]
  const proc = all.find((p) => p.name === name)
  if (proc === undefined || !isProcessRunning(proc.pid, proc.command)) {
    throw new ComponentRestartError(`${name} is not a running process of the cluster in ${dir}`)
  }
  const record = (pid: number): void => {
    const nodeNow = readRealNodeState(layout.stateFile)
    if (nodeNow?.processes.some((p) => p.name === name) === true) {
      writeRealNodeState(layout.stateFile, {
        ...nodeNow,
        processes: replacePid(nodeNow.processes, name, pid),
      })
      return
    }
    const planeNow = readControlPlaneState(dir)
    if (planeNow === undefined) throw new ComponentRestartError(`${dir} has no control plane`)
    writeControlPlaneState(dir, {
      ...planeNow,
      processes: replacePid(planeNow.processes, name, pid),
    })
  }
  return { proc, all, record }
}

/**
 * Stops recorded process `name` of the real node's cluster in `dir` with `options.signal` (SIGKILL
 * after `options.graceMs`), waits until it has exited and `options.downMs` more, and starts it
 * again as it ran (see the module).
 * Resolves once it is started, not once it is ready: the caller waits for what it needs (the
 * Node Ready, `/readyz`). Needs root, as the cluster does.
 *
 * @throws {@link ComponentRestartError} when `name` is not running, shares its namespaces with
 *   no other recorded process, or survives SIGKILL.
 */
export async function restartClusterComponent(
  dir: string,
  name: string,
  options: RestartOptions = {}
): Promise<ComponentRestart> {
  const { proc, all, record } = findRecord(dir, name)
  const image = readProcessImage(proc.pid)
  const anchor = namespaceAnchor(proc, all)
  const [command = proc.command, ...args] = image.argv
  const forced = await stopOnly(proc, options.signal ?? 'SIGKILL', options.graceMs ?? 20_000)
  if ((options.downMs ?? 0) > 0) await new Promise((r) => setTimeout(r, options.downMs))
  const started = ManagedProcess.start(
    {
      name,
      command,
      args,
      logFile: join(realNodeLayout(dir).logsDir, `${name}.log`),
      env: image.env,
      // nsenter joins the namespaces and working directory, then execs: the pid is the
      // component's own, as `cluster down` expects.
      launch: {
        command: 'nsenter',
        args: [
          `--net=/proc/${anchor}/ns/net`,
          `--mount=/proc/${anchor}/ns/mnt`,
          `--wd=${image.cwd}`,
          '--',
          command,
          ...args,
        ],
      },
    },
    true
  )
  record(started.pid)
  return { name, oldPid: proc.pid, newPid: started.pid, forced }
}
