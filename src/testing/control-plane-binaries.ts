import { accessSync, constants } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

/** Kubernetes release the local control plane is built from (keep in step with build.sh). */
export const KUBERNETES_VERSION = 'v1.37.2'
/** etcd release built alongside it (keep in step with build.sh). */
export const ETCD_VERSION = 'v3.7.3'

/** Paths of the three control-plane binaries. */
export interface ControlPlaneBinaries {
  readonly dir: string
  readonly etcd: string
  readonly kubeApiserver: string
  readonly kubeControllerManager: string
}

/** Raised when the control-plane binaries are not built yet; the message says how to build them. */
export class MissingBinariesError extends Error {
  override readonly name = 'MissingBinariesError'
}

/** Returns the directory `tools/controlplane/build.sh` writes to by default. */
export function defaultBinaryDir(env: NodeJS.ProcessEnv = process.env): string {
  const cacheRoot = env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache')
  return join(
    cacheRoot,
    'metacontroller-ts',
    'controlplane',
    `kube-${KUBERNETES_VERSION}-etcd-${ETCD_VERSION}`
  )
}

/**
 * Locates the control-plane binaries: `$METACTL_CONTROLPLANE_BIN`, else the build cache.
 *
 * @throws {@link MissingBinariesError} naming the missing file and the command that builds it.
 */
export function findControlPlaneBinaries(
  env: NodeJS.ProcessEnv = process.env
): ControlPlaneBinaries {
  const dir = env['METACTL_CONTROLPLANE_BIN'] ?? defaultBinaryDir(env)
  const binaries = {
    dir,
    etcd: join(dir, 'etcd'),
    kubeApiserver: join(dir, 'kube-apiserver'),
    kubeControllerManager: join(dir, 'kube-controller-manager'),
  }
  for (const path of [binaries.etcd, binaries.kubeApiserver, binaries.kubeControllerManager]) {
    try {
      accessSync(path, constants.X_OK)
    } catch {
      throw new MissingBinariesError(
        `control-plane binary ${path} is missing. Build the local control plane with ` +
          '`make controlplane` (or tools/controlplane/build.sh; a cold build takes 15-30 min), ' +
          'or set METACTL_CONTROLPLANE_BIN to a directory holding etcd, kube-apiserver and ' +
          'kube-controller-manager.'
      )
    }
  }
  return binaries
}
