/**
 * The cluster `metactl dev` works against: the one `--kubeconfig`/`--context` name (kind, k3d,
 * any running cluster), or the local control
 * plane in `metactl cluster`'s directory, reused when it runs and started (in the background, so
 * that the next `metactl dev` reuses it) when it does not.
 *
 * @module
 */
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import type { KubeObject } from '../../core/kube-object.js'
import type { ClusterConfig } from '../../kube/cluster-config.js'
import { DynamicClient } from '../../kube/dynamic-client.js'
import { KubeTransport } from '../../kube/kube-transport.js'
import { loadClusterConfig } from '../../kube/load-cluster-config.js'
import { findControlPlaneBinaries } from '../../cluster/control-plane-binaries.js'
import { readControlPlaneState, runningProcesses } from '../../cluster/control-plane-state.js'
import type { ControlPlaneState } from '../../cluster/control-plane-state.js'
import { startControlPlane } from '../../cluster/control-plane.js'
import { installCrds } from '../../cluster/install-crds.js'
import { metacontrollerCrdFiles } from '../../cluster/metacontroller-crds.js'

/** A connection to the dev cluster, and how it was obtained. */
export interface DevCluster {
  readonly config: ClusterConfig
  readonly client: DynamicClient
  readonly kubeconfig: string
  /** `started`, `reused` or `given` (--kubeconfig). */
  readonly origin: 'started' | 'reused' | 'given'
  close(): Promise<void>
}

function isRunning(state: ControlPlaneState | undefined): state is ControlPlaneState {
  if (state === undefined) return false
  return runningProcesses(state).length === state.processes.length
}

async function connect(
  kubeconfig: string,
  origin: DevCluster['origin'],
  context?: string
): Promise<DevCluster> {
  const config = await loadClusterConfig({ kubeconfig, context })
  const transport = new KubeTransport(config, { timeoutMs: 30_000 })
  return {
    config,
    client: new DynamicClient(transport),
    kubeconfig,
    origin,
    close: () => transport.close(),
  }
}

/**
 * Connects to (or starts) the cluster and installs the Metacontroller CRDs and the project's.
 * CRDs given at start are known to the garbage collector at once; later ones after its next
 * discovery, about 30 s.
 */
export async function openDevCluster(options: {
  readonly kubeconfig?: string
  readonly context?: string
  readonly clusterDir: string
  readonly crds: readonly KubeObject[]
  readonly progress: (line: string) => void
}): Promise<DevCluster> {
  const crds = [...metacontrollerCrdFiles(), ...options.crds]
  if (options.kubeconfig !== undefined || options.context !== undefined) {
    const kubeconfig =
      options.kubeconfig ?? process.env['KUBECONFIG'] ?? join(homedir(), '.kube', 'config')
    const cluster = await connect(kubeconfig, 'given', options.context)
    await installCrds(cluster.client, crds)
    return cluster
  }
  const dir = resolve(options.clusterDir)
  const state = readControlPlaneState(dir)
  if (isRunning(state)) {
    options.progress(`reusing the local cluster in ${dir}`)
    const cluster = await connect(state.kubeconfig, 'reused')
    await installCrds(cluster.client, crds)
    return cluster
  }
  options.progress(`starting a local cluster in ${dir} (it keeps running after dev stops)`)
  const plane = await startControlPlane({
    dir,
    useExistingCluster: false,
    background: true,
    binaries: findControlPlaneBinaries(),
    crds,
    onProgress: (message) => {
      options.progress(`  ${message}`)
    },
  })
  await plane.release()
  return connect(plane.kubeconfigPath, 'started')
}
