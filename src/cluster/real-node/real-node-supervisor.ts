/**
 * Entry point run by {@link startRealNodeCluster} inside the cluster's fresh network and mount
 * namespaces (`unshare --net --mount --propagation private`): it sets the namespaces up, starts
 * the control plane and the node in them, records every process, and exits 0 once the node is
 * Ready (or 1, with the reason on stderr). The processes it started keep the namespaces alive.
 *
 * @module
 */
import { join } from 'node:path'
import { startControlPlane } from '../control-plane.js'
import { findControlPlaneBinaries } from '../control-plane-binaries.js'
import { ManagedProcess } from '../managed-process.js'
import type { RecordedProcess } from '../control-plane-state.js'
import { waitFor } from '../../runtime/wait-for.js'
import { createCgroupRoot, hostCgroupV1Mounts } from './cgroup-root.js'
import { ensureClusterPki } from './cluster-pki.js'
import {
  maskGlobalSysctls,
  mountPrivateDirs,
  namespaceId,
  setUpNodeNetwork,
} from './namespace-setup.js'
import { requireRealNodePrerequisites } from './node-binaries.js'
import {
  importImages,
  startContainerd,
  startKubelet,
  startKubeProxy,
  writeNodeConfig,
} from './node-components.js'
import { NODE_IP, realNodeLayout } from './real-node-layout.js'
import { writeRealNodeState } from './real-node-state.js'
import type { RealNodeState } from './real-node-state.js'
import { forwarderCommand } from './forwarder-command.js'

/** What the host passes to the supervisor (as JSON in its first argument). */
export interface SupervisorOptions {
  readonly dir: string
  readonly apiServerPort: number
  readonly crds: readonly string[]
  readonly simulatedNodes: number
  readonly startTimeoutMs: number
}

const SERVICE_ACCOUNTS = {
  group: '',
  version: 'v1',
  resource: 'serviceaccounts',
  namespaced: true,
} as const

function log(message: string): void {
  process.stderr.write(`${message}\n`)
}

async function supervise(options: SupervisorOptions): Promise<void> {
  const layout = realNodeLayout(options.dir)
  const paths = requireRealNodePrerequisites()
  const cgroupMounts = hostCgroupV1Mounts()
  setUpNodeNetwork()
  maskGlobalSysctls(layout.sysctlDir)
  const processes: RecordedProcess[] = []
  let state: RealNodeState = {
    netns: namespaceId('self', 'net') ?? '',
    mntns: namespaceId('self', 'mnt') ?? '',
    cgroupRoot: layout.cgroupRoot,
    cgroupMounts,
    createdDirs: [],
    apiServerPort: options.apiServerPort,
    processes,
  }
  writeRealNodeState(layout.stateFile, state)
  state = { ...state, createdDirs: mountPrivateDirs() }
  createCgroupRoot(layout.cgroupRoot, cgroupMounts)
  writeRealNodeState(layout.stateFile, state)
  const record = (proc: ManagedProcess): void => {
    processes.push({ name: proc.spec.name, pid: proc.pid, command: proc.spec.command })
    writeRealNodeState(layout.stateFile, { ...state, processes })
  }

  const pki = ensureClusterPki(join(layout.pkiDir, 'cluster'))
  const plane = await startControlPlane({
    dir: options.dir,
    useExistingCluster: false,
    background: true,
    binaries: findControlPlaneBinaries(),
    crds: options.crds,
    nodes: options.simulatedNodes,
    apiServerPort: options.apiServerPort,
    startTimeoutMs: options.startTimeoutMs,
    podNetwork: {
      advertiseAddress: NODE_IP,
      tlsCertFile: pki.certFile,
      tlsKeyFile: pki.keyFile,
      caFile: pki.caFile,
    },
    onProgress: log,
  })
  const forwarder = forwarderCommand(
    `unix:${layout.apiServerSocket}`,
    `tcp:127.0.0.1:${options.apiServerPort}`
  )
  record(
    ManagedProcess.start(
      {
        name: 'apiserver-forwarder-inside',
        command: forwarder.command,
        args: forwarder.args,
        logFile: join(layout.logsDir, 'apiserver-forwarder-inside.log'),
      },
      true
    )
  )
  writeNodeConfig(layout, paths, plane.kubeconfigPath)
  let started = Date.now()
  const containerd = await startContainerd(layout, paths, options.startTimeoutMs)
  record(containerd)
  await importImages(layout, paths, [
    join(paths.imagesDir, 'pause.tar'),
    join(paths.imagesDir, 'web.tar'),
  ])
  log(`containerd ready, images imported in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  started = Date.now()
  const timeoutMs = options.startTimeoutMs
  const [kubelet, kubeProxy] = await Promise.all([
    startKubelet(layout, paths, plane.kubeconfigPath, plane.client, timeoutMs),
    startKubeProxy(layout, paths, timeoutMs),
  ])
  record(kubelet)
  record(kubeProxy)
  log(`kubelet and kube-proxy ready in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  // Pods are admitted with a service-account token, so none can be created before this exists.
  await waitFor(
    async () => {
      try {
        await plane.client.get(SERVICE_ACCOUNTS, 'default', { namespace: 'default' })
        return true
      } catch {
        return false
      }
    },
    { timeoutMs, intervalMs: 200, description: 'the default ServiceAccount' }
  )
  await plane.release()
}

const options = JSON.parse(process.argv[2] ?? '{}') as SupervisorOptions
try {
  await supervise(options)
  process.exit(0)
} catch (error) {
  log(error instanceof Error ? error.message : String(error))
  process.exit(1)
}
