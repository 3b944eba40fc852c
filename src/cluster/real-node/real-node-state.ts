/**
 * What a real node's cluster records in `<dir>/real-node.json` as it starts, so `cluster down`
 * (or a failed start) can remove everything: the processes beyond the control plane's own, the
 * namespaces, the cgroup and the host directories it created.
 *
 * @module
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { isJsonObject } from '../../core/kube-object.js'
import type { RecordedProcess } from '../control-plane-state.js'

/** The record of a real node's cluster. */
export interface RealNodeState {
  /** `net:[inode]` of the cluster's network namespace. */
  readonly netns: string
  /** `mnt:[inode]` of its mount namespace. */
  readonly mntns: string
  /** `net:[inode]` of the network namespace of each real node after the first (absent: one node). */
  readonly nodeNetns?: readonly string[]
  readonly cgroupRoot: string
  readonly cgroupMounts: readonly string[]
  /** Empty host directories created as tmpfs mount points, removed on `down`. */
  readonly createdDirs: readonly string[]
  /** The API server port on the host's 127.0.0.1 (and inside the namespace). */
  readonly apiServerPort: number
  /** Node processes in start order (containerd, kubelet, kube-proxy, the forwarders). */
  readonly processes: readonly RecordedProcess[]
}

/** Writes the record (again) as the start goes on. */
export function writeRealNodeState(path: string, state: RealNodeState): void {
  writeFileSync(path, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 })
}

/** Reads the record, or `undefined` when there is none. */
export function readRealNodeState(path: string): RealNodeState | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
  const value: unknown = JSON.parse(text)
  if (!isJsonObject(value) || typeof value['netns'] !== 'string') {
    throw new Error(`${path} is not a real node's state file; remove it and retry`)
  }
  return value as unknown as RealNodeState
}
