import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parse } from 'yaml'
import {
  cniConfList,
  containerdConfigToml,
  kubeletConfigYaml,
  kubeProxyConfigYaml,
  nodeKubeconfigText,
} from './node-config-files.js'
import { CLUSTER_DNS_IP } from './cluster-dns-manifests.js'
import { PAUSE_IMAGE, POD_SUBNET, realNodeLayout } from './real-node-layout.js'

const layout = realNodeLayout('/var/tmp/rn')

describe('real node configuration files', () => {
  it('lets the kubelet run on cgroup v1 without systemd, under the cluster own cgroup', () => {
    const config = parse(kubeletConfigYaml(layout)) as Record<string, unknown>
    assert.equal(config['failCgroupV1'], false)
    assert.equal(config['cgroupDriver'], 'cgroupfs')
    assert.equal(config['cgroupRoot'], layout.cgroupRoot)
    assert.equal(config['protectKernelDefaults'], false)
    // No CAP_SYS_RESOURCE here: a negative OOM score would fail.
    assert.equal(config['oomScoreAdj'], 0)
    assert.equal(config['containerRuntimeEndpoint'], `unix://${layout.containerdSocket}`)
    assert.equal(config['podLogsDir'], layout.podLogsDir)
  })

  it('points every Pod at the cluster DNS and nothing of the host', () => {
    const config = parse(kubeletConfigYaml(layout)) as Record<string, unknown>
    assert.deepEqual(config['clusterDNS'], [CLUSTER_DNS_IP])
    assert.equal(config['clusterDomain'], 'cluster.local')
    assert.equal(config['resolvConf'], layout.resolvConf)
  })

  it('keeps every containerd path in the cluster directory and never pulls the sandbox image', () => {
    const toml = containerdConfigToml(layout, '/opt/bin')
    assert.match(toml, /^root = "\/var\/tmp\/rn\/node\/containerd\/root"$/m)
    assert.match(toml, /^state = "\/var\/tmp\/rn\/node\/containerd\/state"$/m)
    assert.match(toml, /restrict_oom_score_adj = true/)
    assert.match(toml, /netns_mounts_under_state_dir = true/)
    assert.ok(toml.includes(`sandbox = "${PAUSE_IMAGE}"`))
    assert.ok(toml.includes('BinaryName = "/opt/bin/runc"'))
    assert.ok(toml.includes('bin_dirs = ["/opt/bin/cni"]'))
    // The NRI socket would go to the host's /var/run/nri.
    assert.match(toml, /nri\.v1\.nri'\]\n\s+disable = true/)
  })

  it('gives Pods a bridge network whose addresses are kept in the cluster directory', () => {
    const conf = JSON.parse(cniConfList(layout)) as {
      plugins: {
        type: string
        ipam?: { ranges: ({ subnet: string } | undefined)[][]; dataDir: string }
      }[]
    }
    assert.deepEqual(
      conf.plugins.map((p) => p.type),
      ['bridge', 'portmap']
    )
    const ipam = conf.plugins.find((p) => p.type === 'bridge')?.ipam
    assert.equal(ipam?.ranges[0]?.[0]?.subnet, POD_SUBNET)
    assert.equal(ipam.dataDir, layout.cniDataDir)
  })

  it('leaves the kernel-global conntrack settings of kube-proxy alone', () => {
    const config = parse(kubeProxyConfigYaml('/k')) as {
      mode: string
      conntrack: Record<string, unknown>
    }
    assert.equal(config.mode, 'iptables')
    assert.deepEqual(config.conntrack, {
      maxPerCore: 0,
      min: 0,
      tcpEstablishedTimeout: '0s',
      tcpCloseWaitTimeout: '0s',
    })
  })

  it('gives each cluster directory a cgroup of its own', () => {
    assert.notEqual(realNodeLayout('/a').cgroupRoot, realNodeLayout('/b').cgroupRoot)
    assert.match(layout.cgroupRoot, /^\/metactl-[0-9a-f]{10}$/)
  })
})

describe('further real nodes', () => {
  const second = realNodeLayout('/var/tmp/rn', 2)

  it('gives each node its own name, address, Pod subnet, directories and cgroup', () => {
    assert.equal(second.nodeName, 'metactl-real-node-2')
    assert.equal(second.nodeIp, '10.245.0.2')
    assert.equal(second.podSubnet, '10.244.1.0/24')
    assert.equal(second.podGateway, '10.244.1.1')
    assert.equal(second.nodeDir, '/var/tmp/rn/node-2')
    assert.notEqual(second.containerdSocket, layout.containerdSocket)
    // Below the first node's cgroup, so one walk finds every node's Pods at `down`.
    assert.equal(second.cgroupRoot, `${layout.cgroupRoot}/node-2`)
    assert.equal(layout.netnsFile, undefined)
    assert.equal(second.netnsFile, '/var/tmp/rn/node-2/netns')
  })

  it('keeps the first node as a one-node cluster has it', () => {
    assert.equal(layout.nodeName, 'metactl-real-node')
    assert.equal(layout.podSubnet, POD_SUBNET)
    assert.equal(layout.nodeDir, '/var/tmp/rn/node')
  })

  it("uses the node's own Pod subnet and name in CNI and kube-proxy", () => {
    const conf = JSON.parse(cniConfList(second)) as {
      plugins: { ipam?: { ranges: { subnet: string }[][] } }[]
    }
    assert.equal(conf.plugins[0]?.ipam?.ranges[0]?.[0]?.subnet, '10.244.1.0/24')
    const proxy = parse(kubeProxyConfigYaml('/k', second)) as Record<string, unknown>
    assert.equal(proxy['hostnameOverride'], 'metactl-real-node-2')
    // Probed by the supervisor from the cluster's namespace, so on the node's address.
    assert.equal(proxy['healthzBindAddress'], '10.245.0.2:10256')
  })

  it('points a further node at the API server by the hub address, not its own loopback', () => {
    const text = 'clusters:\n- cluster:\n    server: https://127.0.0.1:6443\n'
    assert.equal(
      nodeKubeconfigText(text, 6443, '10.245.0.1'),
      'clusters:\n- cluster:\n    server: https://10.245.0.1:6443\n'
    )
    assert.throws(() => nodeKubeconfigText(text, 7000, '10.245.0.1'), /does not name/)
  })

  it('refuses a node index outside 1..MAX_REAL_NODES', () => {
    assert.throws(() => realNodeLayout('/a', 0), RangeError)
    assert.throws(() => realNodeLayout('/a', 9), RangeError)
  })
})
