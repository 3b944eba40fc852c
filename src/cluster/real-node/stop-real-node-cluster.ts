/**
 * Takes a real node's cluster down and proves it is gone: the node's processes are stopped, every
 * process left in its cgroup or namespaces (containers, containerd's shims) is killed, the
 * control plane is stopped, the namespaces disappear with their last process (and with them every
 * mount, veth, bridge and iptables rule the node made), and the cgroup and the host directories
 * it created are removed.
 *
 * @module
 */
import { existsSync, readdirSync, rmdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { readControlPlaneState, stopRecordedProcesses } from '../control-plane-state.js'
import { isProcessRunning, stopProcess } from '../managed-process.js'
import { cgroupPids, removeCgroupRoot } from './cgroup-root.js'
import { mountedElsewhere, readCreatedDirs, writeCreatedDirs } from './created-dirs-registry.js'
import { removeVolumes } from '../host-path-storage.js'
import { namespaceId } from './namespace-setup.js'
import { realNodeLayout } from './real-node-layout.js'
import { readRealNodeState } from './real-node-state.js'
import type { RealNodeState } from './real-node-state.js'

/** What `down` did and what, if anything, it could not remove. */
export interface RealNodeTeardown {
  /** Names of the processes stopped, in order. */
  readonly stopped: readonly string[]
  /** Processes killed because they were left in the cgroup or the namespaces. */
  readonly killed: number
  /** What is still there (empty when the teardown is complete). */
  readonly leftovers: readonly string[]
}

/** Pids of every process in the cluster's network or mount namespace, or a further node's. */
export function namespacePids(
  state: Pick<RealNodeState, 'netns' | 'mntns' | 'nodeNetns'>
): number[] {
  const netns = new Set([state.netns, ...(state.nodeNetns ?? [])])
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const pid = Number(entry)
    if (pid === process.pid) continue
    const net = namespaceId(pid, 'net')
    if ((net !== undefined && netns.has(net)) || namespaceId(pid, 'mnt') === state.mntns) {
      pids.push(pid)
    }
  }
  return pids
}

// Removes the mount-point directories any real node's cluster created, unless another one still
// mounts there; returns this cluster's own that could not be removed.
function removeCreatedDirs(own: readonly string[]): string[] {
  const kept: string[] = []
  const failed: string[] = []
  for (const dir of new Set([...readCreatedDirs(), ...own])) {
    if (!existsSync(dir)) continue
    if (mountedElsewhere(dir)) {
      kept.push(dir)
      continue
    }
    try {
      rmdirSync(dir)
    } catch {
      kept.push(dir)
      if (own.includes(dir)) failed.push(`directory ${dir}`)
    }
  }
  writeCreatedDirs(kept)
  return failed
}

function leftPids(state: RealNodeState): number[] {
  return [
    ...new Set([...namespacePids(state), ...cgroupPids(state.cgroupRoot, state.cgroupMounts)]),
  ]
}

// SIGKILL, repeated until nothing is left or the deadline passes (a shim may fork as it dies).
async function killAll(pids: () => number[], deadlineMs: number): Promise<number> {
  let killed = 0
  const until = Date.now() + deadlineMs
  for (;;) {
    const left = pids()
    if (left.length === 0 || Date.now() > until) return killed
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL')
        killed++
      } catch {
        // Already gone.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/**
 * Stops the real node's cluster in `dir` and removes what it made; safe to run again, and on a
 * half-started cluster.
 */
export async function stopRealNodeCluster(dir: string): Promise<RealNodeTeardown> {
  const layout = realNodeLayout(dir)
  const state = readRealNodeState(layout.stateFile)
  const plane = readControlPlaneState(dir)
  const stopped: string[] = []
  let killed = 0
  if (state !== undefined) {
    // Newest first: forwarders, kube-proxy, kubelet, then containerd.
    for (const proc of [...state.processes].reverse()) {
      if (!isProcessRunning(proc.pid, proc.command)) continue
      await stopProcess(proc.pid, proc.command, 10_000)
      stopped.push(proc.name)
    }
    // Containers and shims belong to no recorded process group; the control plane goes after.
    const planePids = new Set(plane?.processes.map((p) => p.pid) ?? [])
    killed += await killAll(() => leftPids(state).filter((p) => !planePids.has(p)), 10_000)
  }
  if (plane !== undefined) {
    for (const proc of await stopRecordedProcesses(plane)) stopped.push(proc.name)
  }
  if (state === undefined) return { stopped, killed, leftovers: [] }
  killed += await killAll(() => leftPids(state), 10_000)
  const leftovers = leftPids(state).map((pid) => `process ${pid}`)
  leftovers.push(
    ...removeCgroupRoot(state.cgroupRoot, state.cgroupMounts).map((d) => `cgroup ${d}`)
  )
  leftovers.push(...removeCreatedDirs(state.createdDirs))
  leftovers.push(...removeVolumes(dir))
  rmSync(layout.apiServerSocket, { force: true })
  for (const name of readdirSync(layout.dir)) {
    if (/^published-\d+\.sock$/.test(name)) rmSync(join(layout.dir, name), { force: true })
  }
  // Complete: nothing is left to find, and the next `down` has nothing to do.
  if (leftovers.length === 0) rmSync(layout.stateFile, { force: true })
  return { stopped, killed, leftovers }
}
