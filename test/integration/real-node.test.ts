// Proves the real node against real binaries: a Pod from a locally built image runs in containerd,
// a Service routes to it through kube-proxy, the host's kernel settings stay as they were, and
// `down` leaves no process, mount, cgroup, veth or iptables rule. These start their own cluster
// (root, `make node`); on a machine without the prerequisites they fail with one message saying
// what is missing, rather than being skipped.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import type { RealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import { startRealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import {
  MASKED_SYSCTLS,
  NODE_IP,
  PRIVATE_MOUNTS,
  WEB_IMAGE,
  realNodeLayout,
} from '../../src/cluster/real-node/real-node-layout.js'
import { readRealNodeState } from '../../src/cluster/real-node/real-node-state.js'
import type { RealNodeState } from '../../src/cluster/real-node/real-node-state.js'
import { namespacePids } from '../../src/cluster/real-node/stop-real-node-cluster.js'
import type { KubeObject } from '../../src/core/kube-object.js'
import { waitFor } from '../../src/runtime/clock/wait-for.js'
import { findFreePort } from '../../src/cluster/free-port.js'
import { request } from 'node:http'
import { KubeTransport } from '../../src/kube/kube-transport.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { PROVISIONER_ROOT, volumesDir } from '../../src/cluster/host-path-storage.js'
import { mountedElsewhere } from '../../src/cluster/real-node/created-dirs-registry.js'

const PODS = { group: '', version: 'v1', resource: 'pods', namespaced: true } as const
const SERVICES = { group: '', version: 'v1', resource: 'services', namespaced: true } as const
const PVCS = {
  group: '',
  version: 'v1',
  resource: 'persistentvolumeclaims',
  namespaced: true,
} as const
const PVS = { group: '', version: 'v1', resource: 'persistentvolumes', namespaced: false } as const
const INGRESSES = {
  group: 'networking.k8s.io',
  version: 'v1',
  resource: 'ingresses',
  namespaced: true,
} as const
const ENDPOINTS = { group: '', version: 'v1', resource: 'endpoints', namespaced: true } as const

function hostSysctls(): Record<string, string> {
  return Object.fromEntries(
    MASKED_SYSCTLS.filter((name) => existsSync(`/proc/sys/${name}`)).map((name) => [
      name,
      readFileSync(`/proc/sys/${name}`, 'utf8').trim(),
    ])
  )
}

// What the host's network namespace holds: links and iptables rules (both tables' dumps).
function hostNetwork(): { links: string; rules: string } {
  const links = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.replace(/^\d+: /, '').split(':')[0])
    .sort()
    .join(',')
  const rules = ['filter', 'nat']
    .map((table) =>
      execFileSync('iptables', ['-t', table, '-S'], { encoding: 'utf8' })
        .split('\n')
        .sort()
        .join('\n')
    )
    .join('\n')
  return { links, rules }
}

// Runs curl inside the cluster's network namespace (Pod and Service addresses live only there).
function curlInside(state: RealNodeState, url: string): string {
  const containerd = state.processes.find((p) => p.name === 'containerd')
  assert.ok(containerd, 'containerd is recorded in the state file')
  return execFileSync(
    'nsenter',
    [`--net=/proc/${containerd.pid}/ns/net`, 'curl', '-sS', '--max-time', '3', url],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }
  )
}

function field(object: KubeObject, path: string[]): unknown {
  let value: unknown = object
  for (const key of path) value = (value as Record<string, unknown> | undefined)?.[key]
  return value
}

function text(object: KubeObject, path: string[]): string {
  const value = field(object, path)
  return typeof value === 'string' ? value : ''
}

describe('real node (containerd, kubelet, kube-proxy in namespaces of their own)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metactl-rn-test-'))
  const sysctlsBefore = hostSysctls()
  const networkBefore = hostNetwork()
  let cluster: RealNodeCluster | undefined
  let state: RealNodeState | undefined
  let publishedPort = 0
  let ingressPort = 0

  before(async () => {
    publishedPort = await findFreePort()
    ingressPort = await findFreePort()
    // The ingress controller's image (tools/traefik's binary; `make node` builds it).
    const images = execFileSync('tools/node/app-images.sh', ['traefik'], { encoding: 'utf8' })
    cluster = await startRealNodeCluster({
      dir,
      publish: [
        { hostPort: publishedPort, nodePort: 30081 },
        { hostPort: ingressPort, nodePort: 30080 },
      ],
      images: [join(images.trim(), 'traefik-v3.6.12.tar')],
    })
    state = readRealNodeState(realNodeLayout(dir).stateFile)
  })

  after(async () => {
    await cluster?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  function running(): { cluster: RealNodeCluster; state: RealNodeState } {
    assert.ok(cluster && state, 'the cluster started')
    return { cluster, state }
  }

  it('runs a Pod from a locally built image in containerd, answering on its Pod IP', async () => {
    const { cluster: c, state: s } = running()
    await c.client.create(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
      spec: {
        containers: [
          {
            name: 'web',
            image: WEB_IMAGE,
            imagePullPolicy: 'Never',
            ports: [{ containerPort: 8080 }],
          },
        ],
      },
    })
    const pod = await waitFor(
      async () => {
        const p = await c.client.get(PODS, 'web', { namespace: 'default' })
        return text(p, ['status', 'phase']) === 'Running' ? p : undefined
      },
      { timeoutMs: 90_000, intervalMs: 500, description: 'Pod web to be Running' }
    )
    const statuses = field(pod, ['status', 'containerStatuses']) as
      { containerID?: string }[] | undefined
    assert.match(statuses?.[0]?.containerID ?? '', /^containerd:\/\/[0-9a-f]{64}$/)
    assert.equal(text(pod, ['spec', 'nodeName']), c.nodeName)
    const podIp = text(pod, ['status', 'podIP'])
    assert.match(podIp, /^10\.244\.0\.\d+$/)
    const page = await waitFor(
      () => {
        try {
          return curlInside(s, `http://${podIp}:8080/`)
        } catch {
          return undefined
        }
      },
      { timeoutMs: 20_000, intervalMs: 500, description: 'the Pod to answer on its IP' }
    )
    assert.match(page, /Hello from web/)
  })

  it('routes a Service to the Pod through kube-proxy', async () => {
    const { cluster: c, state: s } = running()
    const service = await c.client.create(SERVICES, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    })
    const clusterIp = text(service, ['spec', 'clusterIP'])
    assert.match(clusterIp, /^10\.0\.0\.\d+$/)
    const page = await waitFor(
      () => {
        try {
          return curlInside(s, `http://${clusterIp}/`)
        } catch {
          return undefined
        }
      },
      {
        timeoutMs: 30_000,
        intervalMs: 500,
        description: 'the Service to answer through kube-proxy',
      }
    )
    assert.match(page, /Hello from web/)
  })

  it('forwards a published 127.0.0.1 port of the host to a NodePort Service (--publish)', async () => {
    const { cluster: c } = running()
    await c.client.create(SERVICES, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web-node-port', namespace: 'default' },
      spec: {
        type: 'NodePort',
        selector: { app: 'web' },
        ports: [{ port: 80, targetPort: 8080, nodePort: 30081 }],
      },
    })
    const page = await waitFor(
      async () => {
        try {
          const res = await fetch(`http://127.0.0.1:${publishedPort}/`)
          return res.ok ? await res.text() : undefined
        } catch {
          return undefined
        }
      },
      { timeoutMs: 30_000, intervalMs: 500, description: 'the published port to answer' }
    )
    assert.match(page, /Hello from web/)
  })

  it('serves an Ingress through Traefik on a published 127.0.0.1 port', async () => {
    const { cluster: c } = running()
    const kubectl = (...args: string[]): string =>
      execFileSync('kubectl', ['--kubeconfig', c.kubeconfigPath, ...args], { encoding: 'utf8' })
    kubectl('apply', '-f', 'tools/traefik/ingress.yaml')
    kubectl('-n', 'traefik', 'rollout', 'status', 'deployment/traefik', '--timeout=120s')
    await c.client.create(INGRESSES, {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        rules: [
          {
            host: 'web.local',
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: 'web', port: { number: 80 } } },
                },
              ],
            },
          },
        ],
      },
    })
    // fetch() drops a Host header (a forbidden header name); node:http sends it.
    const get = (host: string): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: ingressPort, path: '/', headers: { host } })
        req.on('response', (res) => {
          let body = ''
          res.on('data', (chunk: Buffer) => (body += chunk.toString()))
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, body })
          })
        })
        req.on('error', reject)
        req.end()
      })
    const page = await waitFor(
      async () => {
        try {
          const res = await get('web.local')
          return res.status === 200 ? res.body : undefined
        } catch {
          return undefined
        }
      },
      { timeoutMs: 30_000, intervalMs: 500, description: 'Traefik to route web.local' }
    )
    assert.match(page, /Hello from web/)
    // The route is the Ingress's: another host is not served.
    assert.equal((await get('other.local')).status, 404)
  })

  it('lets a Pod reach the API server through the kubernetes Service, with a token mounted', async () => {
    const { cluster: c } = running()
    const token = '/var/run/secrets/kubernetes.io/serviceaccount/token'
    // busybox's TLS cannot agree on a cipher suite with the API server, so the Pod proves the
    // route (a TCP connection to 10.0.0.1:443 through kube-proxy) and the token's presence.
    const script = `/bin/busybox nc -w 5 10.0.0.1 443 </dev/null && echo tcp-ok; /bin/busybox wc -c < ${token}`
    await c.client.create(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'api-route', namespace: 'default' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'probe',
            image: WEB_IMAGE,
            imagePullPolicy: 'Never',
            command: ['/bin/busybox', 'sh', '-c', script],
          },
        ],
      },
    })
    await waitFor(
      async () => {
        const p = await c.client.get(PODS, 'api-route', { namespace: 'default' })
        return ['Succeeded', 'Failed'].includes(text(p, ['status', 'phase']))
      },
      { timeoutMs: 60_000, intervalMs: 500, description: 'Pod api-route to finish' }
    )
    // Its output comes back the way `kubectl logs` gets it: API server -> kubelet -> containerd.
    const transport = new KubeTransport(c.config)
    try {
      const log = await transport.requestText({
        method: 'GET',
        path: '/api/v1/namespaces/default/pods/api-route/log',
        // What kubectl sends: the log itself is text/plain.
        accept: 'application/json, */*',
      })
      const [route, tokenBytes] = log.trim().split('\n')
      assert.equal(route, 'tcp-ok')
      assert.ok(Number(tokenBytes) > 100, `a service-account token is mounted (${log})`)
    } finally {
      await transport.close()
    }
  })

  it('puts the API server behind the kubernetes Service at an address Pods reach', async () => {
    const { cluster: c } = running()
    const endpoints = await c.client.get(ENDPOINTS, 'kubernetes', { namespace: 'default' })
    const subsets = field(endpoints, ['subsets']) as { addresses?: { ip: string }[] }[] | undefined
    assert.deepEqual(
      subsets?.flatMap((subset) => subset.addresses?.map((a) => a.ip) ?? []),
      [NODE_IP]
    )
  })

  it('runs a Pod that writes to a claim of the default StorageClass, into the cluster directory', async () => {
    const { cluster: c } = running()
    await c.client.create(PVCS, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    })
    await c.client.create(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'writer', namespace: 'default' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'writer',
            image: WEB_IMAGE,
            imagePullPolicy: 'Never',
            command: [
              '/bin/busybox',
              'sh',
              '-c',
              'echo written-by-$(/bin/busybox hostname) > /data/file',
            ],
            volumeMounts: [{ name: 'data', mountPath: '/data' }],
          },
        ],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
      },
    })
    const pod = await waitFor(
      async () => {
        const p = await c.client.get(PODS, 'writer', { namespace: 'default' })
        return ['Succeeded', 'Failed'].includes(text(p, ['status', 'phase'])) ? p : undefined
      },
      { timeoutMs: 90_000, intervalMs: 500, description: 'Pod writer to finish' }
    )
    assert.equal(text(pod, ['status', 'phase']), 'Succeeded')
    const claim = await c.client.get(PVCS, 'data', { namespace: 'default' })
    const volume = await c.client.get(PVS, text(claim, ['spec', 'volumeName']))
    const path = text(volume, ['spec', 'hostPath', 'path'])
    assert.match(path, new RegExp(`^${PROVISIONER_ROOT}/`))
    // The file is in the cluster's directory: the real node's mount namespace binds it there.
    const file = join(volumesDir(c.dir), basename(path), 'file')
    assert.equal(readFileSync(file, 'utf8'), 'written-by-writer\n')
  })

  it('leaves the host kernel settings the kubelet writes as they were', () => {
    running()
    assert.deepEqual(hostSysctls(), sysctlsBefore)
  })

  it('leaves no process, mount, cgroup, veth or iptables rule behind on down', async () => {
    const { cluster: c, state: s } = running()
    cluster = undefined
    const teardown = await c.stop()
    assert.deepEqual(teardown.leftovers, [])
    assert.ok(teardown.stopped.includes('kubelet'))
    // The namespaces are gone with their last process, and with them their mounts and rules.
    assert.deepEqual(namespacePids(s), [])
    for (const mount of s.cgroupMounts) assert.equal(existsSync(join(mount, s.cgroupRoot)), false)
    for (const created of s.createdDirs) assert.equal(existsSync(created), false)
    assert.ok(
      PRIVATE_MOUNTS.every((d) => !readFileSync('/proc/self/mounts', 'utf8').includes(` ${d} `))
    )
    assert.deepEqual(hostNetwork(), networkBefore)
    assert.deepEqual(hostSysctls(), sysctlsBefore)
    // The volumes go with the cluster; the host's mount point too, unless another cluster uses it.
    assert.equal(existsSync(volumesDir(c.dir)), false)
    assert.ok(!existsSync(PROVISIONER_ROOT) || mountedElsewhere(PROVISIONER_ROOT))
  })
})
