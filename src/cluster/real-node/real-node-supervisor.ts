/**
 * Entry point run by {@link startRealNodeCluster} inside the cluster's fresh network and mount
 * namespaces (`unshare --net --mount --propagation private`): it sets the namespaces up, starts
 * the control plane and the node in them, records every process, and exits 0 once the node is
 * Ready (or 1, with the reason on stderr). The processes it started keep the namespaces alive.
 *
 * @module
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startControlPlane } from '../control-plane.js'
import type { ControlPlane } from '../control-plane.js'
import { findControlPlaneBinaries } from '../control-plane-binaries.js'
import type { FeatureGates } from '../api-server-options.js'
import { ManagedProcess } from '../managed-process.js'
import type { RecordedProcess } from '../control-plane-state.js'
import { waitFor } from '../../runtime/clock/wait-for.js'
import { bindVolumes } from '../host-path-storage.js'
import { requireImageMirror, startImageMirror, writeRegistryHosts } from './image-mirror.js'
import { startClusterDns } from './cluster-dns.js'
import { COREDNS_ARCHIVE } from './coredns-image.js'
import { createCgroupRoot, hostCgroupV1Mounts } from './cgroup-root.js'
import { ensureClusterPki } from './cluster-pki.js'
import { readCreatedDirs, writeCreatedDirs } from './created-dirs-registry.js'
import {
  maskGlobalSysctls,
  mountPrivateDirs,
  namespaceId,
  setUpNodeNetwork,
} from './namespace-setup.js'
import { requireRealNodePrerequisites } from './node-binaries.js'
import { createExtraNodeNetwork } from './extra-node-network.js'
import { nodeKubeconfigText } from './node-config-files.js'
import type { NodeComponentPaths } from './node-binaries.js'
import {
  importImages,
  startContainerd,
  startKubelet,
  startKubeProxy,
  writeNodeConfig,
} from './node-components.js'
import { NODE_IP, realNodeLayout } from './real-node-layout.js'
import type { RealNodeLayout } from './real-node-layout.js'
import { writeRealNodeState } from './real-node-state.js'
import type { RealNodeState } from './real-node-state.js'
import { forwarderCommand } from './forwarder-command.js'
import { publishedPortSocket } from './published-port.js'
import type { PublishedPort } from './published-port.js'

/** What the host passes to the supervisor (as JSON in its first argument). */
export interface SupervisorOptions {
  readonly dir: string
  readonly apiServerPort: number
  readonly crds: readonly string[]
  readonly simulatedNodes: number
  readonly startTimeoutMs: number
  /** Node ports forwarded from the host (see published-port.ts). */
  readonly publish: readonly PublishedPort[]
  /** Image archives imported besides pause and web, and served by the cluster's image mirror (image-mirror.ts). */
  readonly images: readonly string[]
  /** Real nodes, 1 to MAX_REAL_NODES (real-node-layout.ts); node 1 shares the cluster's namespace. */
  readonly realNodes: number
  /** kube-apiserver feature gates. */
  readonly featureGates?: FeatureGates
  /** kube-apiserver's audit log of writes (a path outside the private mounts, which the host reads). */
  readonly auditLogPath?: string
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

// One node: containerd (then the images), the kubelet and kube-proxy, each recorded as it starts.
async function startNode(
  layout: RealNodeLayout,
  paths: NodeComponentPaths,
  plane: ControlPlane,
  record: (proc: ManagedProcess) => void,
  options: SupervisorOptions
): Promise<void> {
  const timeoutMs = options.startTimeoutMs
  const extra = options.images
  // Node 1 shares the API server's namespace; the others reach it at the hub's address.
  const kubeconfig = layout.index === 1 ? plane.kubeconfigPath : layout.nodeKubeconfig
  writeNodeConfig(layout, paths, kubeconfig)
  const who = layout.index === 1 ? '' : `${layout.nodeName}: `
  let started = Date.now()
  const containerd = await startContainerd(layout, paths, timeoutMs)
  record(containerd)
  await importImages(layout, paths, [
    join(paths.imagesDir, 'pause.tar'),
    join(paths.imagesDir, 'web.tar'),
    join(paths.corednsDir, COREDNS_ARCHIVE),
    ...extra,
  ])
  if (extra.length > 0) writeRegistryHosts(layout, extra)
  log(`${who}containerd ready, images imported in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  started = Date.now()
  const [kubelet, kubeProxy] = await Promise.all([
    startKubelet(layout, paths, kubeconfig, plane.client, timeoutMs),
    startKubeProxy(layout, paths, timeoutMs),
  ])
  record(kubelet)
  record(kubeProxy)
  log(`${who}kubelet and kube-proxy ready in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}

// Every node at once; then waits until Pods can be admitted.
async function startNodes(
  layouts: readonly RealNodeLayout[],
  paths: NodeComponentPaths,
  plane: ControlPlane,
  record: (proc: ManagedProcess) => void,
  options: SupervisorOptions
): Promise<void> {
  for (const layout of layouts.slice(1)) {
    const text = readFileSync(plane.kubeconfigPath, 'utf8')
    writeFileSync(layout.nodeKubeconfig, nodeKubeconfigText(text, options.apiServerPort, NODE_IP))
  }
  if (options.images.length > 0) {
    record(
      await startImageMirror(
        layouts[0] ?? realNodeLayout(options.dir),
        options.images,
        options.startTimeoutMs
      )
    )
  }
  await Promise.all(layouts.map((layout) => startNode(layout, paths, plane, record, options)))
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
    {
      timeoutMs: options.startTimeoutMs,
      intervalMs: 200,
      description: 'the default ServiceAccount',
    }
  )
}

function startForwarder(
  layout: RealNodeLayout,
  name: string,
  args: string[],
  command: string
): ManagedProcess {
  return ManagedProcess.start(
    { name, command, args, logFile: join(layout.logsDir, `${name}.log`) },
    true
  )
}

async function supervise(options: SupervisorOptions): Promise<void> {
  const layout = realNodeLayout(options.dir)
  const paths = requireRealNodePrerequisites()
  if (options.images.length > 0) requireImageMirror(options.images)
  const cgroupMounts = hostCgroupV1Mounts()
  const layouts = Array.from({ length: options.realNodes }, (_, i) =>
    realNodeLayout(options.dir, i + 1)
  )
  setUpNodeNetwork()
  maskGlobalSysctls(layout.sysctlDir)
  const processes: RecordedProcess[] = []
  let state: RealNodeState = {
    netns: namespaceId('self', 'net') ?? '',
    mntns: namespaceId('self', 'mnt') ?? '',
    nodeNetns: layouts.slice(1).map(createExtraNodeNetwork),
    cgroupRoot: layout.cgroupRoot,
    cgroupMounts,
    createdDirs: [],
    apiServerPort: options.apiServerPort,
    processes,
  }
  writeRealNodeState(layout.stateFile, state)
  state = { ...state, createdDirs: mountPrivateDirs() }
  writeCreatedDirs([...readCreatedDirs(), ...state.createdDirs])
  // The host-path provisioner's volumes, where the kubelet and runc resolve them too.
  bindVolumes(options.dir)
  // The first node's cgroup before the others', which are below it.
  for (const node of layouts) createCgroupRoot(node.cgroupRoot, cgroupMounts)
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
    volumesMount: 'caller',
    ...(options.featureGates === undefined ? {} : { featureGates: options.featureGates }),
    ...(options.auditLogPath === undefined ? {} : { auditLogPath: options.auditLogPath }),
  })
  const forwarder = forwarderCommand(
    `unix:${layout.apiServerSocket}`,
    `tcp:127.0.0.1:${options.apiServerPort}`
  )
  record(startForwarder(layout, 'apiserver-forwarder-inside', forwarder.args, forwarder.command))
  for (const port of options.publish) {
    const published = forwarderCommand(
      `unix:${publishedPortSocket(options.dir, port)}`,
      `tcp:${NODE_IP}:${port.nodePort}`
    )
    record(
      startForwarder(layout, `published-${port.hostPort}-inside`, published.args, published.command)
    )
  }
  await startNodes(layouts, paths, plane, record, options)
  await startClusterDns(plane.client, options.startTimeoutMs, log)
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
