import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isJsonObject } from '../core/kube-object.js'
import { isProcessRunning, stopProcess } from './managed-process.js'

/** One process of a control plane, as recorded in its state file. */
export interface RecordedProcess {
  readonly name: string
  readonly pid: number
  /** Absolute path of the binary, checked before the pid is ever signalled. */
  readonly command: string
}

/** What `metactl cluster up` records in `<dir>/control-plane.json` for `status` and `down`. */
export interface ControlPlaneState {
  readonly kubernetesVersion: string
  readonly kubeconfig: string
  readonly server: string
  readonly etcdUrl: string
  /** Simulated nodes registered at start (absent in state files written before nodes existed). */
  readonly nodes?: number
  readonly startedAt: string
  readonly processes: readonly RecordedProcess[]
}

/** Returns the path of the state file in a control-plane directory. */
export function statePath(dir: string): string {
  return join(dir, 'control-plane.json')
}

/** Writes the state file of a control plane. */
export function writeControlPlaneState(dir: string, state: ControlPlaneState): void {
  writeFileSync(statePath(dir), `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 })
}

/** Reads the state file of a control plane, or `undefined` when the directory has none. */
export function readControlPlaneState(dir: string): ControlPlaneState | undefined {
  let text: string
  try {
    text = readFileSync(statePath(dir), 'utf8')
  } catch {
    return undefined
  }
  const value: unknown = JSON.parse(text)
  if (!isJsonObject(value) || !Array.isArray(value['processes'])) {
    throw new Error(`${statePath(dir)} is not a control-plane state file; remove it and retry`)
  }
  return value as unknown as ControlPlaneState
}

/** Lists the recorded processes that are still running. */
export function runningProcesses(state: ControlPlaneState): RecordedProcess[] {
  return state.processes.filter((p) => isProcessRunning(p.pid, p.command))
}

/**
 * Stops every recorded process that still runs, controller manager first and etcd last, and
 * returns them in that order.
 */
export async function stopRecordedProcesses(state: ControlPlaneState): Promise<RecordedProcess[]> {
  const alive = runningProcesses(state).reverse()
  for (const proc of alive) await stopProcess(proc.pid, proc.command)
  return alive
}
