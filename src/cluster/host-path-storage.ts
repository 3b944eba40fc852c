/**
 * Storage for every local cluster that runs the default controllers: a default StorageClass
 * `standard` (the name kind uses) served by kube-controller-manager's in-tree host-path
 * provisioner (`kubernetes.io/host-path`), so a PersistentVolumeClaim binds at once and a Pod
 * that mounts it is scheduled.
 *
 * @remarks
 * The provisioner puts every volume in `/tmp/hostpath_pv/<uuid>`, a path built into it. So that
 * volumes belong to their cluster (and go with it on `cluster down`), the cluster binds a
 * directory of its own, `<dir>/volumes`, over that path in a mount namespace that only it sees:
 * the controller manager's own (a KWOK plane) or the real node's (where the kubelet and runc
 * resolve the same path). The host keeps only the empty mount point, created when missing,
 * recorded in the registry the real node uses for its mount points, and removed by the last
 * cluster down that no longer mounts there.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, rmdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { DynamicClient } from '../kube/dynamic-client.js'
import { AlreadyExistsError } from '../kube/api-error.js'
import type { KubeObject } from '../core/kube-object.js'

import {
  mountedElsewhere,
  readCreatedDirs,
  writeCreatedDirs,
} from './real-node/created-dirs-registry.js'

/** Provisioner name of kube-controller-manager's host-path plugin. */
export const HOST_PATH_PROVISIONER = 'kubernetes.io/host-path'
/** Where the host-path provisioner creates volumes (built into kube-controller-manager). */
export const PROVISIONER_ROOT = '/tmp/hostpath_pv'
/** Name of the default StorageClass (kind's). */
export const DEFAULT_STORAGE_CLASS = 'standard'

const STORAGE_CLASSES = {
  group: 'storage.k8s.io',
  version: 'v1',
  resource: 'storageclasses',
  namespaced: false,
} as const

/** The directory of a cluster that holds its volumes (bound over {@link PROVISIONER_ROOT}). */
export function volumesDir(clusterDir: string): string {
  return join(clusterDir, 'volumes')
}

/** The default StorageClass every local cluster with the default controllers gets. */
export function defaultStorageClass(): KubeObject {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: {
      name: DEFAULT_STORAGE_CLASS,
      annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
    },
    provisioner: HOST_PATH_PROVISIONER,
    reclaimPolicy: 'Delete',
    // The provisioner ignores topology (every volume is on the one machine), so waiting for the
    // first consumer would gain nothing and only delay binding.
    volumeBindingMode: 'Immediate',
  }
}

/** Creates the default StorageClass unless it exists (a restart on the same data). */
export async function ensureDefaultStorageClass(client: DynamicClient): Promise<void> {
  try {
    await client.create(STORAGE_CLASSES, defaultStorageClass())
  } catch (error) {
    if (!(error instanceof AlreadyExistsError)) throw error
  }
}

/**
 * Creates the cluster's volumes directory and the host's empty mount point when missing (the
 * mount point recorded, so the last cluster down removes it).
 */
export function prepareVolumes(clusterDir: string): void {
  mkdirSync(volumesDir(clusterDir), { recursive: true, mode: 0o755 })
  if (existsSync(PROVISIONER_ROOT)) return
  mkdirSync(PROVISIONER_ROOT, { recursive: true, mode: 0o755 })
  writeCreatedDirs([...readCreatedDirs(), PROVISIONER_ROOT])
}

/**
 * Prepares the volumes (see {@link prepareVolumes}) and binds them over {@link PROVISIONER_ROOT}
 * in the caller's mount namespace, which must be a private one of the cluster's (a real node's).
 */
export function bindVolumes(clusterDir: string): void {
  prepareVolumes(clusterDir)
  execFileSync('mount', ['--bind', volumesDir(clusterDir), PROVISIONER_ROOT], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
}

/**
 * The command and arguments that run `command args…` in a mount namespace of its own with the
 * cluster's volumes directory bound over {@link PROVISIONER_ROOT}. As root that is `unshare
 * --mount`; otherwise a user namespace mapping the caller to root there allows the bind. `sh`
 * then execs the command, so its pid and argv[0] are the ones recorded.
 */
export function privateVolumesCommand(
  clusterDir: string,
  command: string,
  args: readonly string[],
  isRoot: boolean = process.getuid?.() === 0
): { command: string; args: string[] } {
  const user = isRoot ? [] : ['--user', '--map-root-user']
  return {
    command: 'unshare',
    args: [
      ...user,
      '--mount',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      `mount --bind "$0" ${PROVISIONER_ROOT} && exec "$@"`,
      volumesDir(clusterDir),
      command,
      ...args,
    ],
  }
}

/**
 * Removes the cluster's volumes and, when no cluster mounts there any more, the recorded mount
 * point. Returns what could not be removed.
 */
export function removeVolumes(clusterDir: string): string[] {
  const leftovers: string[] = []
  try {
    rmSync(volumesDir(clusterDir), { recursive: true, force: true })
  } catch {
    leftovers.push(`directory ${volumesDir(clusterDir)}`)
  }
  const recorded = readCreatedDirs()
  if (!recorded.includes(PROVISIONER_ROOT) || mountedElsewhere(PROVISIONER_ROOT)) return leftovers
  try {
    if (existsSync(PROVISIONER_ROOT)) rmdirSync(PROVISIONER_ROOT)
    writeCreatedDirs(recorded.filter((d) => d !== PROVISIONER_ROOT))
  } catch {
    // Not empty: something else writes there; leave it and its record.
    leftovers.push(`directory ${PROVISIONER_ROOT}`)
  }
  return leftovers
}
