/**
 * The configuration files of the real node's components, rendered from its layout: pure text,
 * so every setting that matters on this machine class is pinned by a unit test.
 *
 * @module
 */
import { stringify } from 'yaml'
import { CLUSTER_CIDR, PAUSE_IMAGE, REAL_NODE_NAME } from './real-node-layout.js'
import type { RealNodeLayout } from './real-node-layout.js'
import { CLUSTER_DNS_IP, CLUSTER_DOMAIN } from './cluster-dns-manifests.js'

const toml = (value: string): string => JSON.stringify(value)

/**
 * containerd 2.x configuration: every path under the cluster's directory, the pinned pause image
 * (imported, never pulled), runc with seccomp, and `restrict_oom_score_adj` because this machine
 * has no CAP_SYS_RESOURCE (a negative `oom_score_adj` fails).
 */
export function containerdConfigToml(layout: RealNodeLayout, binDir: string): string {
  return `version = 3
root = ${toml(layout.containerdRoot)}
state = ${toml(layout.containerdState)}

[grpc]
  address = ${toml(layout.containerdSocket)}

[plugins.'io.containerd.internal.v1.opt']
  path = ${toml(`${layout.nodeDir}/containerd/opt`)}

[plugins.'io.containerd.nri.v1.nri']
  disable = true

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = ${toml(PAUSE_IMAGE)}
  # Registry hosts (image-mirror.ts): docker.io pulls go to the cluster's own mirror first.
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = ${toml(`${layout.nodeDir}/certs.d`)}

[plugins.'io.containerd.cri.v1.runtime']
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_cdi = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = [${toml(`${binDir}/cni`)}]
    conf_dir = ${toml(layout.cniConfDir)}
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = ${toml(`${binDir}/runc`)}
        Root = ${toml(layout.runcRoot)}
        SystemdCgroup = false

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
`
}

/**
 * The CNI network: a `cni0` bridge as the Pods' gateway, host-local addresses from the node's own
 * Pod subnet, port maps. Each node's bridge is in its own network namespace; the cluster's routes
 * join the subnets (extra-node-network.ts).
 */
export function cniConfList(layout: RealNodeLayout): string {
  const conf = {
    cniVersion: '1.0.0',
    name: 'metactl',
    plugins: [
      {
        type: 'bridge',
        bridge: 'cni0',
        isGateway: true,
        // A Pod reaches itself through its own Service.
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: layout.podSubnet, gateway: layout.podGateway }]],
          routes: [{ dst: '0.0.0.0/0' }],
          dataDir: layout.cniDataDir,
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  }
  return `${JSON.stringify(conf, null, 2)}\n`
}

/**
 * KubeletConfiguration for this machine class: cgroup v1 allowed (`failCgroupV1: false`), the
 * cgroupfs driver (no systemd), all Pods under the cluster's own `cgroupRoot`, no negative OOM
 * score (no CAP_SYS_RESOURCE), the cluster DNS (cluster-dns-manifests.ts) as every Pod's resolver
 * with no host search domain or nameserver (`resolvConf` is an empty file), and anonymous read access on its port inside the namespace so the
 * API server can fetch logs.
 */
export function kubeletConfigYaml(layout: RealNodeLayout): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: layout.cgroupRoot,
    cgroupsPerQOS: true,
    protectKernelDefaults: false,
    oomScoreAdj: 0,
    failSwapOn: false,
    containerRuntimeEndpoint: `unix://${layout.containerdSocket}`,
    imageServiceEndpoint: `unix://${layout.containerdSocket}`,
    podLogsDir: layout.podLogsDir,
    resolvConf: layout.resolvConf,
    clusterDNS: [CLUSTER_DNS_IP],
    clusterDomain: CLUSTER_DOMAIN,
    healthzBindAddress: '127.0.0.1',
    healthzPort: 10248,
    readOnlyPort: 0,
    authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
    authorization: { mode: 'AlwaysAllow' },
    // Small thresholds: a shared CI disk must not evict the test Pods.
    evictionHard: {
      'memory.available': '50Mi',
      'nodefs.available': '1%',
      'imagefs.available': '1%',
    },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    serializeImagePulls: false,
    registerNode: true,
    nodeStatusReportFrequency: '10s',
  })
}

/**
 * KubeProxyConfiguration: iptables mode inside the node's namespace; the conntrack settings that
 * are global to the kernel (nf_conntrack_max, its timeouts) are left alone. The health endpoint is
 * where the supervisor can reach it from the cluster's namespace.
 */
export function kubeProxyConfigYaml(
  kubeconfigPath: string,
  node: Pick<RealNodeLayout, 'nodeName' | 'kubeProxyHealthz'> = {
    nodeName: REAL_NODE_NAME,
    kubeProxyHealthz: '127.0.0.1:10256',
  }
): string {
  return stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig: kubeconfigPath },
    mode: 'iptables',
    hostnameOverride: node.nodeName,
    clusterCIDR: CLUSTER_CIDR,
    healthzBindAddress: node.kubeProxyHealthz,
    metricsBindAddress: '127.0.0.1:10249',
    conntrack: {
      maxPerCore: 0,
      min: 0,
      tcpEstablishedTimeout: '0s',
      tcpCloseWaitTimeout: '0s',
    },
  })
}

/**
 * The kubeconfig of node 2 and later: the cluster's own, with the API server at the hub's node
 * address instead of `127.0.0.1` (which, in the node's namespace, is the node itself). The
 * server's certificate names that address too (cluster-pki.ts).
 */
export function nodeKubeconfigText(
  clusterKubeconfig: string,
  apiServerPort: number,
  apiServerIp: string
): string {
  const local = `https://127.0.0.1:${apiServerPort}`
  if (!clusterKubeconfig.includes(local)) {
    throw new Error(`the cluster's kubeconfig does not name ${local}`)
  }
  return clusterKubeconfig.replaceAll(local, `https://${apiServerIp}:${apiServerPort}`)
}
