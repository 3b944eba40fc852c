// Proves two real nodes on one Pod network: each node has its own containerd, kubelet and
// kube-proxy in a network namespace of its own, a Pod on node 1 reaches a Pod on node 2 by its
// Pod IP and through a Service by its DNS name (CoreDNS runs on node 1, so node 2's Pods cross
// the network for every lookup), a DaemonSet gets a Pod on each node, the scheduler spreads a
// Deployment over both, and `down` leaves nothing of either node. Starts its own cluster (root,
// `make node`); on a machine without the prerequisites it fails with one message, never skips.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import {
  MASKED_SYSCTLS,
  realNodeLayout,
  WEB_IMAGE,
} from '../../src/cluster/real-node/real-node-layout.js'
import { exampleImageArchive } from '../support/example-image-archive.js'
import { loadImages } from '../../src/cluster/images/load-images.js'
import { readRealNodeState } from '../../src/cluster/real-node/real-node-state.js'
import type { RealNodeState } from '../../src/cluster/real-node/real-node-state.js'
import { startRealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import type { RealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import { namespacePids } from '../../src/cluster/real-node/stop-real-node-cluster.js'
import type { KubeObject } from '../../src/core/kube-object.js'
import type { ResourceRef } from '../../src/kube/dynamic-client.js'
import { waitFor } from '../../src/runtime/clock/wait-for.js'

const ref = (group: string, resource: string, namespaced = true): ResourceRef => ({
  group,
  version: 'v1',
  resource,
  namespaced,
})
const NAMESPACES = ref('', 'namespaces', false)
const NODES = ref('', 'nodes', false)
const PODS = ref('', 'pods')
const SERVICES = ref('', 'services')
const DAEMONSETS = ref('apps', 'daemonsets')
const DEPLOYMENTS = ref('apps', 'deployments')

const NS = 'multi-node'
const NODE_1 = 'metactl-real-node'
const NODE_2 = 'metactl-real-node-2'

function hostSysctls(): string {
  return MASKED_SYSCTLS.filter((name) => existsSync(`/proc/sys/${name}`))
    .map((name) => `${name}=${readFileSync(`/proc/sys/${name}`, 'utf8').trim()}`)
    .join(',')
}

// The host's links and iptables rules: nothing of any node may appear there.
function hostNetwork(): string {
  const links = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.replace(/^\d+: /, '').split(':')[0])
    .sort()
    .join(',')
  const rules = ['filter', 'nat'].map((table) =>
    execFileSync('iptables', ['-t', table, '-S'], { encoding: 'utf8' }).split('\n').sort().join()
  )
  return [links, ...rules].join('\n')
}

function webPod(name: string, nodeName: string, app: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { app } },
    spec: {
      nodeName,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'web', image: WEB_IMAGE, imagePullPolicy: 'Never' }],
    },
  }
}

// Pods of a workload (by label) that run, with the node each is on.
async function runningNodes(cluster: RealNodeCluster, app: string): Promise<string[]> {
  const list = await cluster.client.list(PODS, { namespace: NS, labelSelector: `app=${app}` })
  return list.items
    .filter((pod) => (pod['status'] as { phase?: string } | undefined)?.phase === 'Running')
    .map((pod) => (pod['spec'] as { nodeName?: string } | undefined)?.nodeName ?? '')
    .sort()
}

describe('two real nodes on one Pod network', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metactl-rn-multi-'))
  const sysctlsBefore = hostSysctls()
  const networkBefore = hostNetwork()
  let cluster: RealNodeCluster | undefined
  let state: RealNodeState | undefined

  before(async () => {
    cluster = await startRealNodeCluster({ dir, realNodes: 2 })
    state = readRealNodeState(realNodeLayout(dir).stateFile)
    await cluster.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: NS },
    })
  })

  after(async () => {
    await cluster?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  function running(): RealNodeCluster {
    assert.ok(cluster, 'the cluster started')
    return cluster
  }

  // Runs a shell script in a Pod's container (kubectl exec: API server, then that node's
  // kubelet). busybox's wget exits with a segmentation fault in this image, so HTTP goes
  // through its nc.
  function inPod(pod: string, script: string, ...args: string[]): string {
    const kubeconfig = running().kubeconfigPath
    return execFileSync(
      'kubectl',
      [
        '--kubeconfig',
        kubeconfig,
        '-n',
        NS,
        'exec',
        pod,
        '--',
        '/bin/busybox',
        'sh',
        '-c',
        script,
        'sh',
        ...args,
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 }
    )
  }

  // An HTTP GET from a Pod; the answer's body names the Pod that served it.
  function httpGet(pod: string, address: string, port: number): string {
    const request = 'printf "GET / HTTP/1.0\\r\\n\\r\\n" | /bin/busybox nc -w 5 "$1" "$2"'
    return inPod(pod, request, address, String(port))
  }

  // A name as the Pod's resolver answers it (busybox's nslookup, at the cluster DNS).
  function lookUp(pod: string, name: string): string {
    const answer = inPod(pod, '/bin/busybox nslookup "$1"', name)
    return /Name:\s+\S+\s+Address:\s*([\d.]+)/.exec(answer)?.[1] ?? `no address in: ${answer}`
  }

  it('registers both nodes Ready, each at its own address', async () => {
    const c = running()
    assert.deepEqual(c.nodeNames, [NODE_1, NODE_2])
    const addresses = await Promise.all(
      c.nodeNames.map(async (name) => {
        const node = await c.client.get(NODES, name)
        const status = node['status'] as { addresses?: { type: string; address: string }[] }
        return status.addresses?.find((a) => a.type === 'InternalIP')?.address
      })
    )
    assert.deepEqual(addresses, ['10.245.0.1', '10.245.0.2'])
  })

  it('lets a Pod on node 1 reach a Pod on node 2 by Pod IP and by Service name', async () => {
    const c = running()
    await c.client.create(PODS, webPod('client', NODE_1, 'client'))
    await c.client.create(PODS, webPod('server', NODE_2, 'server'))
    await c.client.create(SERVICES, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'server', namespace: NS },
      spec: { selector: { app: 'server' }, ports: [{ port: 80, targetPort: 8080 }] },
    })
    let serverIp = ''
    await waitFor(
      async () => {
        const [client, server] = await Promise.all(
          ['client', 'server'].map((n) => c.client.get(PODS, n, { namespace: NS }))
        )
        const ready = (p: KubeObject | undefined): boolean =>
          (p?.['status'] as { phase?: string } | undefined)?.phase === 'Running'
        serverIp = (server?.['status'] as { podIP?: string } | undefined)?.podIP ?? ''
        return ready(client) && ready(server)
      },
      { timeoutMs: 90_000, intervalMs: 500, description: 'client and server Pods Running' }
    )
    // Node 2's Pods come from its own subnet, 10.244.1.0/24.
    assert.match(serverIp, /^10\.244\.1\.\d+$/)
    assert.match(httpGet('client', serverIp, 8080), /Hello from server/)
    // The Service by its DNS name: the Pod asks CoreDNS (busybox's nslookup, which reads the
    // resolv.conf the kubelet wrote), then connects to the answer.
    const service = await c.client.get(SERVICES, 'server', { namespace: NS })
    const clusterIp = (service['spec'] as { clusterIP?: string }).clusterIP ?? ''
    const address = lookUp('client', `server.${NS}.svc.cluster.local`)
    assert.equal(address, clusterIp)
    // The endpoint may need a moment after the Pod runs.
    await waitFor(
      () => {
        try {
          return httpGet('client', address, 80).includes('Hello from server')
        } catch {
          return false
        }
      },
      { timeoutMs: 60_000, intervalMs: 1000, description: 'the Service answering at its name' }
    )
  })

  it("lets node 2's Pods resolve names at CoreDNS on node 1 and reach a Pod there", async () => {
    const c = running()
    const client = await c.client.get(PODS, 'client', { namespace: NS })
    const clientIp = (client['status'] as { podIP?: string }).podIP ?? ''
    assert.match(clientIp, /^10\.244\.0\.\d+$/)
    assert.match(httpGet('server', clientIp, 8080), /Hello from client/)
    const service = await c.client.get(SERVICES, 'server', { namespace: NS })
    const clusterIp = (service['spec'] as { clusterIP?: string }).clusterIP
    assert.equal(lookUp('server', `server.${NS}.svc.cluster.local`), clusterIp)
  })

  it('runs a DaemonSet Pod on each real node', async () => {
    const c = running()
    await c.client.create(DAEMONSETS, {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'every-node', namespace: NS },
      spec: {
        selector: { matchLabels: { app: 'every-node' } },
        template: {
          metadata: { labels: { app: 'every-node' } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'web', image: WEB_IMAGE, imagePullPolicy: 'Never' }],
          },
        },
      },
    })
    let nodes: string[] = []
    await waitFor(
      async () => {
        nodes = await runningNodes(c, 'every-node')
        return nodes.length === 2
      },
      { timeoutMs: 90_000, intervalMs: 500, description: 'a DaemonSet Pod Running on each node' }
    )
    assert.deepEqual(nodes, [NODE_1, NODE_2])
  })

  it('spreads a two-replica Deployment over both nodes', async () => {
    const c = running()
    const labels = { app: 'spread' }
    await c.client.create(DEPLOYMENTS, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'spread', namespace: NS },
      spec: {
        replicas: 2,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            terminationGracePeriodSeconds: 1,
            topologySpreadConstraints: [
              {
                maxSkew: 1,
                topologyKey: 'kubernetes.io/hostname',
                whenUnsatisfiable: 'DoNotSchedule',
                labelSelector: { matchLabels: labels },
              },
            ],
            containers: [{ name: 'web', image: WEB_IMAGE, imagePullPolicy: 'Never' }],
          },
        },
      },
    })
    let nodes: string[] = []
    await waitFor(
      async () => {
        nodes = await runningNodes(c, 'spread')
        return nodes.length === 2
      },
      { timeoutMs: 90_000, intervalMs: 500, description: 'both replicas Running' }
    )
    assert.deepEqual(nodes, [NODE_1, NODE_2])
  })

  it('loads an image archive into every node (cluster load), so a Pod on node 2 runs it', async () => {
    const archive = exampleImageArchive('busybox')
    const names = await loadImages({ dir, sources: [{ kind: 'archive', path: archive }] })
    assert.ok(names.length > 0, 'the archive names an image')
    const image = names[0] ?? ''
    await running().client.create(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'loaded', namespace: NS },
      spec: {
        nodeName: NODE_2,
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'c', image, imagePullPolicy: 'Never', command: ['sleep', '3600'] }],
      },
    })
    await waitFor(
      async () =>
        (await running().client.get(PODS, 'loaded', { namespace: NS }))['status'] !== undefined &&
        (
          (await running().client.get(PODS, 'loaded', { namespace: NS }))['status'] as {
            phase?: string
          }
        ).phase === 'Running',
      { timeoutMs: 60_000, description: `a Pod of ${image} Running on ${NODE_2}` }
    )
  })

  it('leaves no process, namespace, cgroup, link or rule of either node behind on down', async () => {
    const c = running()
    assert.ok(state, 'the state file was written')
    const s = state
    assert.equal(s.nodeNetns?.length, 1, 'node 2 has a network namespace of its own')
    cluster = undefined
    const teardown = await c.stop()
    assert.deepEqual(teardown.leftovers, [])
    for (const name of ['kubelet', 'kubelet-2', 'containerd-2', 'kube-proxy-2']) {
      assert.ok(teardown.stopped.includes(name), `${name} was stopped`)
    }
    // No process in the cluster's namespaces or node 2's: with their last process they are gone.
    assert.deepEqual(namespacePids(s), [])
    for (const mount of s.cgroupMounts) assert.equal(existsSync(join(mount, s.cgroupRoot)), false)
    for (const created of s.createdDirs) assert.equal(existsSync(created), false)
    assert.equal(hostNetwork(), networkBefore)
    assert.equal(hostSysctls(), sysctlsBefore)
  })
})
