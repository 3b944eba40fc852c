/**
 * Where a real node's cluster keeps everything, and its fixed addresses: pure values and paths,
 * so the configuration files rendered from them are unit-tested without a machine.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import { join } from 'node:path'

/** Name the kubelet registers the (first) real node under. */
export const REAL_NODE_NAME = 'metactl-real-node'
/** Most real nodes one cluster runs: each takes one `/24` of {@link CLUSTER_CIDR}. */
export const MAX_REAL_NODES = 8
/** The node's address inside the cluster's network namespace (a veth end there). */
export const NODE_IP = '10.245.0.1'
/** Prefix length of {@link NODE_IP}'s network. */
export const NODE_PREFIX_LENGTH = 24
/** Pod addresses of the node (the bridge CNI plugin's host-local range). */
export const POD_SUBNET = '10.244.0.0/24'
/** Gateway of {@link POD_SUBNET}: the `cni0` bridge. */
export const POD_GATEWAY = '10.244.0.1'
/** All Pod addresses of the cluster (kube-proxy masquerades traffic from outside it). */
export const CLUSTER_CIDR = '10.244.0.0/16'
/** Service addresses (the control plane's `--service-cluster-ip-range`). */
export const SERVICE_CIDR = '10.0.0.0/24'
/** The `kubernetes` Service's address, the first of {@link SERVICE_CIDR}. */
export const KUBERNETES_SERVICE_IP = '10.0.0.1'
/** The pause image containerd runs as every Pod's sandbox (built by tools/node/images.sh). */
export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10.2'
/** The test web server image (built by tools/node/images.sh): busybox httpd on port 8080. */
export const WEB_IMAGE = 'metactl.local/web:1'

/**
 * Global (not namespaced) kernel settings the kubelet writes at start (vm.overcommit_memory,
 * kernel.panic, …). The cluster's mount namespace covers each with a file of its own, so the
 * kubelet writes there and the host's values never change.
 */
export const MASKED_SYSCTLS: readonly string[] = [
  'vm/overcommit_memory',
  'vm/panic_on_oom',
  'kernel/panic',
  'kernel/panic_on_oops',
  'kernel/keys/root_maxkeys',
  'kernel/keys/root_maxbytes',
]

/**
 * Host directories with paths built into containerd or the CNI library (the shims' sockets under
 * /run/containerd, the CNI result cache under /var/lib/cni). The mount namespace puts a tmpfs on
 * each, so nothing is written to the host's.
 */
export const PRIVATE_MOUNTS: readonly string[] = ['/run/containerd', '/var/lib/cni']

/** Paths of one real node's cluster, all under its directory. */
export interface RealNodeLayout {
  readonly dir: string
  /** Which real node (1 for the first, which shares the cluster's network namespace). */
  readonly index: number
  readonly nodeName: string
  /** The node's address on the cluster's node network. */
  readonly nodeIp: string
  /** The node's Pod addresses (its `cni0` bridge's host-local range). */
  readonly podSubnet: string
  readonly podGateway: string
  /**
   * Node 2 and later: the file the node's own network namespace is bound to (in the cluster's
   * mount namespace only). Node 1 runs in the cluster's namespace itself.
   */
  readonly netnsFile?: string
  /** The kubeconfig the node's kubelet and kube-proxy use (the API server as they reach it). */
  readonly nodeKubeconfig: string
  /** kube-proxy's health endpoint, which the supervisor probes from the cluster's namespace. */
  readonly kubeProxyHealthz: string
  /** The cgroup (in every v1 hierarchy) the kubelet puts all Pods under. */
  readonly cgroupRoot: string
  readonly nodeDir: string
  readonly containerdConfig: string
  readonly containerdRoot: string
  readonly containerdState: string
  readonly containerdSocket: string
  readonly runcRoot: string
  readonly cniConfDir: string
  readonly cniDataDir: string
  readonly kubeletRoot: string
  readonly kubeletConfig: string
  readonly podLogsDir: string
  readonly kubeProxyConfig: string
  readonly resolvConf: string
  readonly sysctlDir: string
  readonly pkiDir: string
  /** Unix socket the host's forwarder connects to; the one inside connects on to the API server. */
  readonly apiServerSocket: string
  /** What `cluster down` needs: pids, namespace, cgroup root (see real-node-state.ts). */
  readonly stateFile: string
  readonly logsDir: string
}

/** Name of real node `index` (1-based): `metactl-real-node`, `metactl-real-node-2`, … */
export function realNodeName(index: number): string {
  return index === 1 ? REAL_NODE_NAME : `${REAL_NODE_NAME}-${index}`
}

/**
 * Returns the layout of real node `index` (1-based, default the first) of the cluster in `dir`
 * (an absolute path). Node `k` has the address `10.245.0.k` and the Pods `10.244.(k-1).0/24`;
 * node 1's paths are those of a one-node cluster.
 */
export function realNodeLayout(dir: string, index = 1): RealNodeLayout {
  if (!Number.isInteger(index) || index < 1 || index > MAX_REAL_NODES) {
    throw new RangeError(`real node index ${index} is not in 1..${MAX_REAL_NODES}`)
  }
  const first = index === 1
  const nodeDir = join(dir, first ? 'node' : `node-${index}`)
  // One cgroup per cluster directory, so two clusters (or a stale one) never share a tree; the
  // other nodes' trees sit below the first's, so one walk finds and removes every node's Pods.
  const id = createHash('sha256').update(dir).digest('hex').slice(0, 10)
  const nodeIp = first ? NODE_IP : `10.245.0.${index}`
  return {
    dir,
    index,
    nodeName: realNodeName(index),
    nodeIp,
    podSubnet: first ? POD_SUBNET : `10.244.${index - 1}.0/24`,
    podGateway: first ? POD_GATEWAY : `10.244.${index - 1}.1`,
    ...(first ? {} : { netnsFile: join(nodeDir, 'netns') }),
    nodeKubeconfig: first ? join(dir, 'kubeconfig') : join(nodeDir, 'kubeconfig'),
    kubeProxyHealthz: first ? '127.0.0.1:10256' : `${nodeIp}:10256`,
    cgroupRoot: first ? `/metactl-${id}` : `/metactl-${id}/node-${index}`,
    nodeDir,
    containerdConfig: join(nodeDir, 'containerd.toml'),
    containerdRoot: join(nodeDir, 'containerd', 'root'),
    containerdState: join(nodeDir, 'containerd', 'state'),
    containerdSocket: join(nodeDir, 'containerd.sock'),
    runcRoot: join(nodeDir, 'runc'),
    cniConfDir: join(nodeDir, 'cni', 'net.d'),
    cniDataDir: join(nodeDir, 'cni', 'ipam'),
    kubeletRoot: join(nodeDir, 'kubelet'),
    kubeletConfig: join(nodeDir, 'kubelet-config.yaml'),
    podLogsDir: join(nodeDir, 'pod-logs'),
    kubeProxyConfig: join(nodeDir, 'kube-proxy.yaml'),
    resolvConf: join(nodeDir, 'resolv.conf'),
    sysctlDir: join(nodeDir, 'sysctl'),
    pkiDir: join(dir, 'pki'),
    apiServerSocket: join(dir, 'apiserver.sock'),
    stateFile: join(dir, 'real-node.json'),
    logsDir: join(dir, 'logs'),
  }
}
