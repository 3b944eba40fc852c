import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { Command, Option } from 'commander'
import { startControlPlane } from '../../cluster/control-plane.js'
import { parseFeatureGates } from '../../cluster/api-server-options.js'
import type { FeatureGates } from '../../cluster/api-server-options.js'
import {
  readControlPlaneState,
  runningProcesses,
  statePath,
  stopRecordedProcesses,
} from '../../cluster/control-plane-state.js'
import { findControlPlaneBinaries } from '../../cluster/control-plane-binaries.js'
import { loadClusterConfig } from '../../kube/load-cluster-config.js'
import { KubeTransport } from '../../kube/kube-transport.js'
import { DynamicClient } from '../../kube/dynamic-client.js'
import { isNodeReady, NODES } from '../../cluster/simulated-nodes.js'
import {
  RealNodeStartError,
  startRealNodeCluster,
} from '../../cluster/real-node/start-real-node-cluster.js'
import { MAX_REAL_NODES } from '../../cluster/real-node/real-node-layout.js'
import { stopRealNodeCluster } from '../../cluster/real-node/stop-real-node-cluster.js'
import { removeVolumes } from '../../cluster/host-path-storage.js'
import { readRealNodeState } from '../../cluster/real-node/real-node-state.js'
import { parsePublishedPort } from '../../cluster/real-node/published-port.js'
import type { PublishedPort } from '../../cluster/real-node/published-port.js'
import { realNodeLayout } from '../../cluster/real-node/real-node-layout.js'
import { RealNodePrerequisiteError } from '../../cluster/real-node/node-binaries.js'
import { CliError } from '../cli-error.js'
import { installForRuntime } from './cluster-install-node.js'
import { addLoadCommand } from './cluster-load.js'
import type { CliIo } from '../cli-io.js'

/** Returns the directory `metactl cluster` uses when `--dir` is not given. */
export function defaultClusterDir(env: NodeJS.ProcessEnv = process.env): string {
  const stateHome = env['XDG_STATE_HOME'] ?? join(homedir(), '.local', 'state')
  return join(stateHome, 'metacontroller-ts', 'cluster')
}

// Both names store into `dir`: `--cluster-dir` is the name `metactl dev` gives the same directory
// (its `--dir` is the project); `--dir`, the first name, keeps working for existing scripts.
class ClusterDirOption extends Option {
  override attributeName(): string {
    return 'dir'
  }
}

function dirOption(): Option {
  return new ClusterDirOption(
    '--cluster-dir <dir>',
    'cluster directory (data, logs, kubeconfig; shared with metactl dev)'
  ).default(defaultClusterDir(), '$XDG_STATE_HOME/metacontroller-ts/cluster')
}

function formerDirOption(): Option {
  return new ClusterDirOption('--dir <dir>', 'the former name of --cluster-dir').hideHelp()
}

interface UpOptions {
  readonly dir: string
  readonly crd: string[]
  readonly port?: string
  readonly nodes?: string
  readonly runtime: string
  readonly featureGates?: string
  readonly auditLog?: string
  readonly publish: string[]
  readonly image: string[]
  readonly realNodes?: string
}

async function up(io: CliIo, opts: UpOptions): Promise<void> {
  const dir = resolve(opts.dir)
  const state = readControlPlaneState(dir)
  if (state !== undefined && runningProcesses(state).length > 0) {
    const pids = runningProcesses(state)
      .map((p) => `${p.name} ${p.pid}`)
      .join(', ')
    throw new CliError(
      `a control plane is already running in ${dir} (${pids}).\n` +
        `  Use it:   export KUBECONFIG=${state.kubeconfig}\n` +
        `  Stop it:  metactl cluster down --cluster-dir ${dir}`
    )
  }
  if (opts.runtime === 'containerd') {
    await upRealNode(io, dir, opts)
    return
  }
  if (opts.runtime !== 'kwok') {
    throw new CliError(`--runtime must be kwok or containerd, got "${opts.runtime}"`)
  }
  if (opts.publish.length > 0 || opts.image.length > 0) {
    throw new CliError('--publish and --image need a real node: add --runtime containerd')
  }
  if (opts.realNodes !== undefined) {
    throw new CliError('--real-nodes needs --runtime containerd')
  }
  const binaries = findControlPlaneBinaries()
  io.err(`Starting a local control plane in ${dir}`)
  const plane = await startControlPlane({
    dir,
    // `cluster up` always starts its own control plane, whatever METACTL_USE_EXISTING_CLUSTER says.
    useExistingCluster: false,
    background: true,
    binaries,
    crds: opts.crd,
    nodes: parseNodes(opts.nodes ?? '1'),
    ...(opts.featureGates === undefined ? {} : { featureGates: gates(opts.featureGates) }),
    ...(opts.auditLog === undefined ? {} : { auditLogPath: resolve(opts.auditLog) }),
    ...(opts.port === undefined ? {} : { apiServerPort: parsePort(opts.port) }),
    onProgress: (message) => {
      io.err(`  ${message}`)
    },
  })
  await plane.release()
  io.out(`Control plane ready: ${plane.config.server}`)
  io.out(`kubeconfig: ${plane.kubeconfigPath}`)
  io.out(`export KUBECONFIG=${plane.kubeconfigPath}`)
  io.out(`Stop it with: metactl cluster down --cluster-dir ${dir}`)
}

function gates(text: string): FeatureGates {
  try {
    return parseFeatureGates(text)
  } catch (error) {
    throw new CliError(`--feature-gates: ${error instanceof Error ? error.message : String(error)}`)
  }
}

// The control plane, containerd, a kubelet and kube-proxy in namespaces of their own.
async function upRealNode(io: CliIo, dir: string, opts: UpOptions): Promise<void> {
  io.err(`Starting a cluster with a real node (containerd) in ${dir}`)
  const cluster = await startRealNodeCluster({
    dir,
    crds: opts.crd,
    simulatedNodes: parseNodes(opts.nodes ?? '0'),
    ...(opts.port === undefined ? {} : { apiServerPort: parsePort(opts.port) }),
    publish: opts.publish.map(published),
    images: opts.image,
    realNodes: parseRealNodes(opts.realNodes ?? '1'),
    ...(opts.featureGates === undefined ? {} : { featureGates: gates(opts.featureGates) }),
    ...(opts.auditLog === undefined ? {} : { auditLogPath: resolve(opts.auditLog) }),
    onProgress: (message) => {
      io.err(`  ${message}`)
    },
  }).catch((error: unknown) => {
    // What the machine lacks, or the supervisor's last lines and where its logs are, is said in
    // full by the message; a stack would only hide it.
    const userFacing =
      error instanceof RealNodePrerequisiteError || error instanceof RealNodeStartError
    throw userFacing ? new CliError(error.message) : error
  })
  await cluster.release()
  const nodes = cluster.nodeNames.length === 1 ? 'node' : 'nodes'
  io.out(
    `Cluster ready: ${cluster.config.server} (${nodes} ${cluster.nodeNames.join(', ')}, containerd)`
  )
  io.out(`kubeconfig: ${cluster.kubeconfigPath}`)
  io.out(`export KUBECONFIG=${cluster.kubeconfigPath}`)
  io.out(`Stop it with: metactl cluster down --cluster-dir ${dir}`)
}

function published(text: string): PublishedPort {
  try {
    return parsePublishedPort(text)
  } catch (error) {
    throw new CliError(`--publish ${error instanceof Error ? error.message : String(error)}`)
  }
}

function parseNodes(text: string): number {
  const nodes = Number(text)
  if (!/^\d+$/.test(text) || nodes > 256) {
    throw new CliError(`--nodes must be an integer from 0 to 256, got "${text}"`)
  }
  return nodes
}

function parseRealNodes(text: string): number {
  const nodes = Number(text)
  if (!/^\d+$/.test(text) || nodes < 1 || nodes > MAX_REAL_NODES) {
    throw new CliError(`--real-nodes must be an integer from 1 to ${MAX_REAL_NODES}, got "${text}"`)
  }
  return nodes
}

function parsePort(text: string): number {
  const port = Number(text)
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new CliError(`--port must be an integer from 1 to 65535, got "${text}"`)
  }
  return port
}

async function status(io: CliIo, opts: { dir: string }): Promise<number> {
  const dir = resolve(opts.dir)
  const state = readControlPlaneState(dir)
  if (state === undefined) {
    io.out(`No control plane in ${dir} (no ${statePath(dir)}). Start one: metactl cluster up`)
    return 1
  }
  const alive = new Set(runningProcesses(state).map((p) => p.pid))
  for (const proc of state.processes) {
    io.out(
      `${proc.name.padEnd(24)} pid ${String(proc.pid).padEnd(8)} ${alive.has(proc.pid) ? 'running' : 'stopped'}`
    )
  }
  if (alive.size === 0) {
    io.out(`stopped (state from ${state.startedAt})`)
    return 1
  }
  let ready: string
  let nodes: string[] = []
  try {
    const config = await loadClusterConfig({ kubeconfig: state.kubeconfig })
    const transport = new KubeTransport(config, { timeoutMs: 5000 })
    try {
      const body = await transport.requestText({
        method: 'GET',
        path: '/readyz',
        accept: 'text/plain',
      })
      ready = body.trim() === 'ok' ? 'ready' : `not ready: ${body.trim()}`
      nodes = await describeNodes(new DynamicClient(transport))
    } finally {
      await transport.close()
    }
  } catch (error) {
    ready = `not ready: ${error instanceof Error ? error.message : String(error)}`
  }
  io.out(`API server ${state.server}: ${ready}`)
  if (ready === 'ready') {
    io.out(nodes.length === 0 ? 'nodes: none (Pods stay Pending)' : `nodes: ${nodes.length}`)
    for (const line of nodes) io.out(`  ${line}`)
  }
  io.out(`export KUBECONFIG=${state.kubeconfig}`)
  return alive.size === state.processes.length && ready === 'ready' ? 0 : 1
}

// One line per Node: name, Ready or NotReady, and the Pods bound to it against its capacity.
async function describeNodes(client: DynamicClient): Promise<string[]> {
  const [nodes, pods] = await Promise.all([
    client.list(NODES),
    client.list({ group: '', version: 'v1', resource: 'pods', namespaced: true }),
  ])
  return nodes.items.map((node) => {
    const name = node.metadata.name ?? ''
    const bound = pods.items.filter((p) => {
      const spec = p['spec'] as { nodeName?: unknown } | undefined
      return spec?.nodeName === name
    }).length
    const status = node['status'] as { capacity?: { pods?: unknown } } | undefined
    const capacity = typeof status?.capacity?.pods === 'string' ? status.capacity.pods : '?'
    const readiness = isNodeReady(node) ? 'Ready' : 'NotReady'
    return `${name.padEnd(24)} ${readiness.padEnd(9)} pods ${bound}/${capacity}`
  })
}

async function down(io: CliIo, opts: { dir: string }): Promise<void> {
  const dir = resolve(opts.dir)
  if (readRealNodeState(realNodeLayout(dir).stateFile) !== undefined) {
    await downRealNode(io, dir)
    return
  }
  const state = readControlPlaneState(dir)
  if (state === undefined) {
    io.out(`No control plane in ${dir}; nothing to stop.`)
    return
  }
  const stopped = await stopRecordedProcesses(state)
  if (stopped.length === 0) io.out(`The control plane in ${dir} was not running.`)
  for (const proc of stopped) io.out(`stopped ${proc.name} (pid ${proc.pid})`)
  const left = runningProcesses(state)
  if (left.length > 0) {
    throw new CliError(`could not stop: ${left.map((p) => `${p.name} ${p.pid}`).join(', ')}`)
  }
  const kept = removeVolumes(dir)
  if (kept.length > 0) throw new CliError(`could not remove: ${kept.join(', ')}`)
}

async function downRealNode(io: CliIo, dir: string): Promise<void> {
  const teardown = await stopRealNodeCluster(dir)
  for (const name of teardown.stopped) io.out(`stopped ${name}`)
  if (teardown.killed > 0) io.out(`killed ${teardown.killed} container and shim process(es)`)
  if (teardown.leftovers.length > 0) {
    throw new CliError(`could not remove: ${teardown.leftovers.join(', ')}`)
  }
  io.out('namespaces, cgroup and mounts removed')
}

// `cluster up` and its options.
function addUpCommand(cluster: Command, io: CliIo): Command {
  return cluster
    .command('up')
    .description('start a local control plane in the background and print its kubeconfig')
    .addOption(dirOption())
    .addOption(formerDirOption())
    .option(
      '--crd <path>',
      'install a CRD manifest before the controllers start (repeatable)',
      collect,
      []
    )
    .option('--port <port>', 'kube-apiserver port (default: a free port)')
    .option(
      '--nodes <count>',
      'simulated nodes (KWOK) with kube-scheduler and the default controllers; 0 for none ' +
        '(default: 1, or 0 beside a real node)'
    )
    .option(
      '--runtime <runtime>',
      'kwok: simulated nodes only; containerd: also a real node (containerd, kubelet, ' +
        'kube-proxy) in network and mount namespaces of its own (root; the node binaries of ' +
        'tools/node/build.sh)',
      'kwok'
    )
    .option(
      '--feature-gates <gates>',
      'kube-apiserver feature gates, e.g. ShardedListAndWatch=true (comma-separated)'
    )
    .option('--audit-log <path>', "write kube-apiserver's audit log of writes (JSON lines) here")
    .option(
      '--publish <hostPort:nodePort>',
      "with --runtime containerd: forward 127.0.0.1:hostPort to the real node's nodePort " +
        '(a NodePort Service, e.g. an ingress controller; repeatable)',
      collect,
      []
    )
    .option(
      '--image <archive>',
      'with --runtime containerd: an image archive to import and serve to Always pulls ' +
        '(repeatable; e.g. from tools/node/example-images.sh)',
      collect,
      []
    )
    .option(
      '--real-nodes <count>',
      'with --runtime containerd: real nodes, each in a network namespace of its own on one ' +
        'Pod network (default: 1)'
    )
    .action(async (opts: UpOptions) => {
      await up(io, opts)
    })
}

/** Builds `metactl cluster install|up|status|down|load`. */
export function clusterCommand(io: CliIo, setExitCode: (code: number) => void): Command {
  const cluster = new Command('cluster').description(
    'run a local Kubernetes cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, simulated nodes) on 127.0.0.1'
  )
  cluster
    .command('install')
    .description(
      "build the local cluster's binaries from Go modules (once; needs Go >= 1.26); does nothing when they are installed"
    )
    .addHelpText(
      'after',
      [
        '',
        'Runs the build scripts shipped in the package (tools/controlplane/build.sh and',
        'tools/kwok/build.sh) for the binaries that are missing, into',
        '$XDG_CACHE_HOME/metacontroller-ts/controlplane (or $METACTL_CONTROLPLANE_BIN and',
        '$METACTL_KWOK_BIN). A cold build takes about 16 min on 2 idle cores, up to an hour on busy ones.',
        'With --runtime containerd it then builds the real node (tools/node, tools/coredns,',
        'tools/image-mirror: containerd, runc, CNI, kubelet, kube-proxy, CoreDNS, images) likewise.',
      ].join('\n')
    )
    .option('--runtime <runtime>', 'kwok, or containerd to build a real node too', 'kwok')
    .action(async (opts: { runtime: string }) => {
      await installForRuntime(io, opts.runtime)
    })
  addUpCommand(cluster, io)
  cluster
    .command('status')
    .description(
      'show whether the control plane in --cluster-dir is running and ready (exit 1 if not)'
    )
    .addOption(dirOption())
    .addOption(formerDirOption())
    .action(async (opts: { dir: string }) => {
      setExitCode(await status(io, opts))
    })
  cluster
    .command('down')
    .description('stop the control plane in --cluster-dir; keeps its data for the next `up`')
    .addOption(dirOption())
    .addOption(formerDirOption())
    .action(async (opts: { dir: string }) => {
      await down(io, opts)
    })
  addLoadCommand(cluster, io, () => [dirOption(), formerDirOption()])
  return cluster
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value]
}
