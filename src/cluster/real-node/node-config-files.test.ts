import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parse } from 'yaml'
import {
  cniConfList,
  containerdConfigToml,
  kubeletConfigYaml,
  kubeProxyConfigYaml,
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
