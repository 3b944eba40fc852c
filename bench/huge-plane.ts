// The 100,000-parent benchmark's control plane (`--nodes 0`) with the limits a real cluster of
// that size raises, and the figures read from its processes: the API server's and etcd's CPU and
// peak RSS from /proc, etcd's database size from its file and its metrics.
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { readControlPlaneState } from '../src/cluster/control-plane-state.js'
import { startControlPlane } from '../src/testing/index.js'
import type { ControlPlane } from '../src/testing/index.js'
import { PARENT_CRD } from './bench-parents.js'
import { readProc } from './engine-process-handle.js'

/**
 * kube-apiserver flags raised as a large cluster's are (kubeadm's defaults are 400 and 200): the
 * in-flight limits are also the total seats of priority and fairness. The benchmark's clients
 * use the admin credentials (`system:masters`, APF's exempt level), so these limits are what
 * other callers would get, not a throttle on the engine.
 */
export const HUGE_API_SERVER_FLAGS: readonly string[] = [
  '--max-requests-inflight=1600',
  '--max-mutating-requests-inflight=800',
]

/**
 * etcd's backend quota: 8 GiB (etcd's largest recommended; its default is 2 GiB, which 300,000
 * objects and their history could reach before the API server's compaction every 5 minutes).
 * etcd reads it from its environment, which the control plane's processes inherit.
 */
export const HUGE_ETCD_QUOTA_BYTES = 8 * 2 ** 30

/** A fresh plane: no nodes, raised limits, the sharded-watch gate, the benchmark's CRDs. */
export async function startHugePlane(): Promise<ControlPlane> {
  process.env['ETCD_QUOTA_BACKEND_BYTES'] = String(HUGE_ETCD_QUOTA_BYTES)
  return await startControlPlane({
    useExistingCluster: false,
    nodes: 0,
    apiServerFlags: HUGE_API_SERVER_FLAGS,
    // Server-side sharded parents for the three-replica rounds; no effect on the others.
    featureGates: { ShardedListAndWatch: true },
    // A cold start on a busy 2-core machine can outlast the default 60 s.
    startTimeoutMs: 180_000,
    crds: [
      PARENT_CRD,
      'deploy/crds/compositecontrollers.yaml',
      'deploy/crds/decoratorcontrollers.yaml',
      'deploy/crds/controllerrevisions.yaml',
    ],
  })
}

/** CPU so far and peak RSS of the plane's API server and etcd, and etcd's database size. */
export interface PlaneReading {
  readonly apiServerCpuMs: number
  readonly apiServerPeakRssBytes: number
  readonly etcdCpuMs: number
  readonly etcdPeakRssBytes: number
  /** Size of etcd's bbolt file (what the quota counts against). */
  readonly etcdDbBytes: number
}

/** Reads the plane's processes from /proc and etcd's file; NaN for what cannot be read. */
export function readPlane(plane: ControlPlane): PlaneReading {
  const processes = readControlPlaneState(plane.dir)?.processes ?? []
  const proc = (name: string) => {
    const pid = processes.find((p) => p.name === name)?.pid
    return pid === undefined ? undefined : readProc(pid)
  }
  const api = proc('kube-apiserver')
  const etcd = proc('etcd')
  let etcdDbBytes = Number.NaN
  try {
    etcdDbBytes = statSync(join(plane.dir, 'etcd', 'member', 'snap', 'db')).size
  } catch {
    // Left NaN: the table then shows that the size could not be read.
  }
  return {
    apiServerCpuMs: api?.cpuMs ?? Number.NaN,
    apiServerPeakRssBytes: api?.peakRssBytes ?? Number.NaN,
    etcdCpuMs: etcd?.cpuMs ?? Number.NaN,
    etcdPeakRssBytes: etcd?.peakRssBytes ?? Number.NaN,
    etcdDbBytes,
  }
}

/** etcd's own figure of the bytes in use in its database (after compaction frees pages). */
export async function etcdInUseBytes(plane: ControlPlane): Promise<number> {
  if (plane.etcdUrl === undefined) return Number.NaN
  const text = await (await fetch(`${plane.etcdUrl}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith('etcd_mvcc_db_total_size_in_use_in_bytes'))
  return line === undefined ? Number.NaN : Number(line.slice(line.lastIndexOf(' ') + 1))
}
