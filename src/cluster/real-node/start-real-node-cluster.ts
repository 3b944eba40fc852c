/**
 * A local cluster with a real node: the control plane, containerd, the kubelet, kube-proxy and
 * the CNI bridge, all inside a network and mount namespace the cluster creates for itself, which
 * the host reaches only through the API server's port on 127.0.0.1.
 *
 * @remarks
 * **Guarantees**
 * - Resolves once the node is Ready, kube-proxy has synced and Pods can be admitted; the images
 *   of tools/node/images.sh are in containerd, so no image is ever pulled.
 * - No host sysctl changes (the kubelet's writes land in files of the cluster's mount namespace),
 *   all Pods live under a cgroup of the cluster's own, nothing listens on the host but the
 *   forwarder on 127.0.0.1.
 * - `stop()` (and `metactl cluster down`) leave no process, mount, cgroup, veth or iptables rule.
 * - A machine without the prerequisites gets one {@link RealNodePrerequisiteError} listing them.
 *
 * @module
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, openSync, closeSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { ClusterConfig } from '../../kube/cluster-config.js'
import type { FeatureGates } from '../api-server-options.js'
import { DynamicClient } from '../../kube/dynamic-client.js'
import { KubeTransport } from '../../kube/kube-transport.js'
import { loadClusterConfig } from '../../kube/load-cluster-config.js'
import { findFreePort } from '../free-port.js'
import { logTail, ManagedProcess } from '../managed-process.js'
import { forwarderCommand, siblingNodeCommand } from './forwarder-command.js'
import { requireRealNodePrerequisites } from './node-binaries.js'
import { requireImageMirror } from './image-mirror.js'
import { MAX_REAL_NODES, REAL_NODE_NAME, realNodeLayout, realNodeName } from './real-node-layout.js'
import { readRealNodeState, writeRealNodeState } from './real-node-state.js'
import { stopRealNodeCluster } from './stop-real-node-cluster.js'
import { publishedPortSocket } from './published-port.js'
import type { PublishedPort } from './published-port.js'
import type { RealNodeTeardown } from './stop-real-node-cluster.js'
import type { SupervisorOptions } from './real-node-supervisor.js'

/** Options of {@link startRealNodeCluster}. */
export interface RealNodeClusterOptions {
  /** Working directory (data, logs, kubeconfig); a temp dir, removed on stop, when absent. */
  readonly dir?: string
  /** CRD manifest files to install before the controllers start. */
  readonly crds?: readonly string[]
  /** KWOK nodes to register beside the real one (default 0). */
  readonly simulatedNodes?: number
  /** API server port on 127.0.0.1; a free one when absent. */
  readonly apiServerPort?: number
  /** Time each component gets to become ready (default 120 s: a cold kubelet on 2 busy cores). */
  readonly startTimeoutMs?: number
  /** Receives one line per startup step. */
  readonly onProgress?: (message: string) => void
  /** Node ports the host reaches on 127.0.0.1 (kind's `extraPortMappings`). */
  readonly publish?: readonly PublishedPort[]
  /**
   * More image archives (e.g. tools/node/example-images.sh's): imported into containerd before the
   * kubelet starts and served by the cluster's image mirror, so Pods pulled `Always` get them too.
   */
  readonly images?: readonly string[]
  /**
   * Real nodes, each with its own containerd, kubelet and kube-proxy in a network namespace of
   * its own, all on one Pod network (default 1; at most {@link MAX_REAL_NODES}).
   */
  readonly realNodes?: number
  /** kube-apiserver feature gates, e.g. `{ ShardedListAndWatch: true }`. */
  readonly featureGates?: FeatureGates
  /**
   * Writes kube-apiserver's audit log of writes here (JSON lines; see `AUDIT_POLICY`), a path the
   * host reads: the upgrade tests attribute each child write to the engine Pod that made it.
   */
  readonly auditLogPath?: string
}

/** A running cluster with a real node. */
export interface RealNodeCluster {
  readonly dir: string
  /** Kubeconfig (admin) for the host: `https://127.0.0.1:PORT`, the forwarder's port. */
  readonly kubeconfigPath: string
  readonly config: ClusterConfig
  readonly client: DynamicClient
  /** Name of the (first) real node. */
  readonly nodeName: string
  /** Names of all real nodes, the first one first. */
  readonly nodeNames: readonly string[]
  /** Stops everything and removes what the cluster made (and a temporary dir). */
  stop(): Promise<RealNodeTeardown>
  /** Closes this handle's connections; the cluster keeps running (`metactl cluster up`). */
  release(): Promise<void>
}

/** Raised when the cluster does not start; the message carries the supervisor's last lines. */
export class RealNodeStartError extends Error {
  override readonly name = 'RealNodeStartError'
}

// Runs the supervisor in new namespaces and resolves with its exit code, passing its lines on.
function runSupervisor(
  options: SupervisorOptions,
  logFile: string,
  onLine: (line: string) => void
): Promise<number> {
  const supervisor = siblingNodeCommand('real-node-supervisor', [JSON.stringify(options)])
  const fd = openSync(logFile, 'a')
  const child = spawn(
    'unshare',
    ['--net', '--mount', '--propagation', 'private', '--', supervisor.command, ...supervisor.args],
    { stdio: ['ignore', fd, 'pipe'], detached: true }
  )
  closeSync(fd)
  let partial = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n')
    partial = lines.pop() ?? ''
    for (const line of lines) onLine(line)
  })
  return new Promise((resolvePromise) => {
    child.on('close', (code) => {
      if (partial !== '') onLine(partial)
      resolvePromise(code ?? 1)
    })
  })
}

/**
 * Starts a cluster with a real node in `options.dir` (see the module's guarantees).
 *
 * @throws {@link RealNodePrerequisiteError} when the machine lacks something; nothing started.
 * @throws {@link RealNodeStartError} when a component fails; everything started is removed.
 */
export async function startRealNodeCluster(
  options: RealNodeClusterOptions = {}
): Promise<RealNodeCluster> {
  const realNodes = options.realNodes ?? 1
  if (!Number.isInteger(realNodes) || realNodes < 1 || realNodes > MAX_REAL_NODES) {
    throw new RangeError(`realNodes must be a whole number from 1 to ${MAX_REAL_NODES}`)
  }
  requireRealNodePrerequisites()
  if (options.images !== undefined && options.images.length > 0) {
    requireImageMirror(options.images.map((i) => resolve(i)))
  }
  const dir =
    options.dir === undefined ? mkdtempSync(join(tmpdir(), 'metactl-rn-')) : resolve(options.dir)
  const layout = realNodeLayout(dir)
  mkdirSync(layout.logsDir, { recursive: true })
  const apiServerPort = options.apiServerPort ?? (await findFreePort())
  const supervisorLog = join(layout.logsDir, 'real-node-supervisor.log')
  const lines: string[] = []
  const code = await runSupervisor(
    {
      dir,
      apiServerPort,
      crds: (options.crds ?? []).map((c) => resolve(c)),
      simulatedNodes: options.simulatedNodes ?? 0,
      startTimeoutMs: options.startTimeoutMs ?? 120_000,
      publish: options.publish ?? [],
      images: (options.images ?? []).map((i) => resolve(i)),
      realNodes,
      ...(options.featureGates === undefined ? {} : { featureGates: options.featureGates }),
      ...(options.auditLogPath === undefined
        ? {}
        : { auditLogPath: resolve(options.auditLogPath) }),
    },
    supervisorLog,
    (line) => {
      lines.push(line)
      options.onProgress?.(line)
    }
  )
  if (code !== 0) {
    await stopRealNodeCluster(dir)
    throw new RealNodeStartError(
      `the real node's cluster did not start:\n${lines.slice(-30).join('\n')}\n` +
        `(logs in ${layout.logsDir}; stdout of the supervisor: ${logTail(supervisorLog, 5)})`
    )
  }
  try {
    const cluster = await connect(
      dir,
      apiServerPort,
      options.publish ?? [],
      options.dir === undefined
    )
    return {
      ...cluster,
      nodeNames: Array.from({ length: realNodes }, (_, i) => realNodeName(i + 1)),
    }
  } catch (error) {
    await stopRealNodeCluster(dir)
    throw error
  }
}

// Starts a host forwarder (127.0.0.1:PORT -> a socket of the cluster) and records it.
function startHostForwarder(dir: string, name: string, port: number, socket: string): void {
  const layout = realNodeLayout(dir)
  const forwarder = forwarderCommand(`tcp:127.0.0.1:${port}`, `unix:${socket}`)
  const proc = ManagedProcess.start(
    {
      name,
      command: forwarder.command,
      args: forwarder.args,
      logFile: join(layout.logsDir, `${name}.log`),
    },
    true
  )
  const state = readRealNodeState(layout.stateFile)
  if (state === undefined) throw new RealNodeStartError(`${layout.stateFile} is missing`)
  writeRealNodeState(layout.stateFile, {
    ...state,
    processes: [
      ...state.processes,
      { name: proc.spec.name, pid: proc.pid, command: proc.spec.command },
    ],
  })
}

// Starts the host's forwarders (the API server's, the published ports') and connects.
async function connect(
  dir: string,
  apiServerPort: number,
  publish: readonly PublishedPort[],
  removeDir: boolean
): Promise<Omit<RealNodeCluster, 'nodeNames'>> {
  const layout = realNodeLayout(dir)
  startHostForwarder(dir, 'apiserver-forwarder', apiServerPort, layout.apiServerSocket)
  for (const port of publish) {
    startHostForwarder(
      dir,
      `published-${port.hostPort}`,
      port.hostPort,
      publishedPortSocket(dir, port)
    )
  }
  const kubeconfigPath = join(dir, 'kubeconfig')
  const config = await loadClusterConfig({ kubeconfig: kubeconfigPath })
  const transport = new KubeTransport(config, { timeoutMs: 10_000 })
  const client = new DynamicClient(transport)
  // The forwarder listens within milliseconds; /readyz through it proves the whole path.
  for (let attempt = 0; ; attempt++) {
    try {
      const body = await transport.requestText({
        method: 'GET',
        path: '/readyz',
        accept: 'text/plain',
      })
      if (body.trim() === 'ok') break
    } catch (error) {
      if (attempt >= 50) throw error
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    dir,
    kubeconfigPath,
    config,
    client,
    nodeName: REAL_NODE_NAME,
    async stop() {
      await transport.close()
      const teardown = await stopRealNodeCluster(dir)
      if (removeDir) rmSync(dir, { recursive: true, force: true })
      return teardown
    },
    async release() {
      await transport.close()
    },
  }
}
