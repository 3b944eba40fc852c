// Proves the real node's cluster DNS the way applications use it: a Pod resolves through glibc's
// getaddrinfo (`getent`, reading the resolv.conf the kubelet wrote: the search list, ndots:5), so
// every short form a manifest may use (`svc`, `svc.ns`, `svc.ns.svc`, the full name), a headless
// Service's Pods and a StatefulSet Pod's own name are answered, and a name outside the cluster
// fails at once (NXDOMAIN, not a resolver timeout). Starts its own cluster (root, `make node`).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { CLUSTER_DNS_IP } from '../../src/cluster/real-node/cluster-dns-manifests.js'
import { defaultNodeBinDir } from '../../src/cluster/real-node/node-binaries.js'
import { realNodeLayout, WEB_IMAGE } from '../../src/cluster/real-node/real-node-layout.js'
import { startRealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import type { RealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
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
const PODS = ref('', 'pods')
const SERVICES = ref('', 'services')
const STATEFULSETS = ref('apps', 'statefulsets')
const ENDPOINT_SLICES = ref('discovery.k8s.io', 'endpointslices')

const NS = 'dns-test'
const PROBE_IMAGE = 'metactl.local/dns-probe:1'
/** glibc's default: 5 s per query, 2 attempts per name. */
const RESOLVER_TIMEOUT_MS = 5000

// busybox for the shell, and this machine's getent with the libraries ldd lists for it.
function buildProbeImage(dir: string): string {
  const bin = defaultNodeBinDir()
  const libs = execFileSync('ldd', ['/usr/bin/getent'], { encoding: 'utf8' }).match(/\/\S+/g) ?? []
  const out = join(dir, 'dns-probe.tar')
  execFileSync(join(bin, 'oci-image'), [
    '-tag',
    PROBE_IMAGE,
    '-o',
    out,
    ...['/usr/bin/getent', '/bin/busybox', ...libs].flatMap((f) => ['-file', `${f}=${f}`]),
    ...['-entrypoint', '/bin/busybox', '-entrypoint', 'sh'],
  ])
  return out
}

// One line per name: NAME|exit code|uptime before|uptime after|addresses (getent ahostsv4).
const LOOKUP_SCRIPT = `
for n in "$@"; do
  a=$(cut -d' ' -f1 /proc/uptime)
  out=$(/usr/bin/getent ahostsv4 "$n"); rc=$?
  b=$(cut -d' ' -f1 /proc/uptime)
  ips=$(echo "$out" | grep STREAM | cut -d' ' -f1 | sort | tr '\\n' ' ')
  echo "LOOKUP|$n|$rc|$a|$b|$ips"
done
nslookup example.com. 2>&1 | grep -o NXDOMAIN | head -1 | sed 's/^/NSLOOKUP|/'
`

interface Lookup {
  readonly code: number
  readonly elapsedMs: number
  readonly addresses: readonly string[]
}

function parseLookups(log: string): { lookups: Map<string, Lookup>; nslookup: string } {
  const lookups = new Map<string, Lookup>()
  let nslookup = ''
  for (const line of log.split('\n')) {
    const [tag, name = '', code, before, afterUptime, ips = ''] = line.split('|')
    if (tag === 'NSLOOKUP') nslookup = name
    if (tag !== 'LOOKUP') continue
    lookups.set(name, {
      code: Number(code),
      elapsedMs: Math.round((Number(afterUptime) - Number(before)) * 1000),
      addresses: ips.trim() === '' ? [] : ips.trim().split(' '),
    })
  }
  return { lookups, nslookup }
}

function podIp(pod: KubeObject): string {
  const ip = (pod['status'] as { podIP?: string } | undefined)?.podIP
  assert.ok(ip !== undefined && ip !== '', `${pod.metadata.name ?? '?'} has an IP`)
  return ip
}

describe('cluster DNS on the real node (CoreDNS, kube-dns)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metactl-dns-test-'))
  let cluster: RealNodeCluster | undefined

  before(async () => {
    const image = buildProbeImage(dir)
    cluster = await startRealNodeCluster({ dir: join(dir, 'cluster') })
    const layout = realNodeLayout(join(dir, 'cluster'))
    execFileSync(
      join(defaultNodeBinDir(), 'ctr'),
      [...['--address', layout.containerdSocket, '-n', 'k8s.io', 'images', 'import', image]],
      { stdio: ['ignore', 'pipe', 'pipe'] }
    )
  })

  after(async () => {
    await cluster?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  async function workloads(c: RealNodeCluster): Promise<{ clusterIp: string; pods: string[] }> {
    await c.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: NS },
    })
    const labels = { app: 'web' }
    const service = await c.client.create(
      SERVICES,
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'plain', namespace: NS },
        spec: { selector: labels, ports: [{ port: 80, targetPort: 8080 }] },
      },
      { namespace: NS }
    )
    await c.client.create(
      SERVICES,
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: NS },
        spec: { clusterIP: 'None', selector: labels, ports: [{ port: 8080 }] },
      },
      { namespace: NS }
    )
    await c.client.create(
      STATEFULSETS,
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'web', namespace: NS },
        spec: {
          serviceName: 'web',
          replicas: 2,
          podManagementPolicy: 'Parallel',
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: { containers: [{ name: 'web', image: WEB_IMAGE, imagePullPolicy: 'Never' }] },
          },
        },
      },
      { namespace: NS }
    )
    const pods = await waitFor(
      async () => {
        const list = await c.client.list(PODS, { namespace: NS, labelSelector: 'app=web' })
        const ready = list.items.filter((p) =>
          (
            p['status'] as { conditions?: { type: string; status: string }[] } | undefined
          )?.conditions?.some((cond) => cond.type === 'Ready' && cond.status === 'True')
        )
        return ready.length === 2 ? ready : undefined
      },
      { timeoutMs: 90_000, intervalMs: 500, description: 'the StatefulSet Pods to be Ready' }
    )
    const byName = new Map(pods.map((p) => [p.metadata.name ?? '', podIp(p)]))
    // CoreDNS answers from EndpointSlices, which the endpoint-slice controller writes some time
    // after the Pods turn Ready: probing before then sees one Pod (or none) behind the headless name.
    await waitFor(async () => (await readyEndpointIps(c, 'web')).length === 2, {
      timeoutMs: 60_000,
      intervalMs: 250,
      description: 'both web Pods in the EndpointSlices',
    })
    const clusterIp = (service['spec'] as { clusterIP: string }).clusterIP
    return { clusterIp, pods: [byName.get('web-0') ?? '', byName.get('web-1') ?? ''] }
  }

  // The ready addresses that the EndpointSlices of a Service list.
  async function readyEndpointIps(c: RealNodeCluster, service: string): Promise<string[]> {
    const slices = await c.client.list(ENDPOINT_SLICES, {
      namespace: NS,
      labelSelector: `kubernetes.io/service-name=${service}`,
    })
    return slices.items.flatMap((slice) =>
      (
        (slice['endpoints'] ?? []) as {
          addresses: string[]
          conditions?: { ready?: boolean }
        }[]
      ).flatMap((e) => (e.conditions?.ready === true ? e.addresses : []))
    )
  }

  // Runs the lookups in a Pod of the test namespace and returns what its log says.
  async function lookUp(c: RealNodeCluster, names: readonly string[]): Promise<string> {
    await c.client.create(
      PODS,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'probe', namespace: NS },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'probe',
              image: PROBE_IMAGE,
              imagePullPolicy: 'Never',
              args: ['-c', LOOKUP_SCRIPT, 'probe', ...names],
            },
          ],
        },
      },
      { namespace: NS }
    )
    await waitFor(
      async () => {
        const pod = await c.client.get(PODS, 'probe', { namespace: NS })
        const phase = (pod['status'] as { phase?: string } | undefined)?.phase ?? ''
        return ['Succeeded', 'Failed'].includes(phase)
      },
      { timeoutMs: 90_000, intervalMs: 500, description: 'the probe Pod to finish' }
    )
    return c.client.transport.requestText({
      method: 'GET',
      path: `/api/v1/namespaces/${NS}/pods/probe/log`,
      // What kubectl sends: the log itself is text/plain.
      accept: 'application/json, */*',
    })
  }

  it('answers every name form of a Service, a headless Service and a StatefulSet Pod; outside names fail fast', async () => {
    assert.ok(cluster, 'the cluster started')
    const { clusterIp, pods } = await workloads(cluster)
    const forms = ['plain', `plain.${NS}`, `plain.${NS}.svc`, `plain.${NS}.svc.cluster.local`]
    const others = [
      'kubernetes.default',
      `web.${NS}`,
      `web-0.web.${NS}`,
      `web-1.web`,
      'example.com',
    ]
    const { lookups, nslookup } = parseLookups(await lookUp(cluster, [...forms, ...others]))
    for (const name of forms) {
      assert.deepEqual(
        lookups.get(name)?.addresses,
        [clusterIp],
        `${name} is the Service's ClusterIP`
      )
    }
    assert.deepEqual(lookups.get('kubernetes.default')?.addresses, ['10.0.0.1'])
    assert.deepEqual(lookups.get(`web.${NS}`)?.addresses, [...pods].sort(), 'headless: the Pod IPs')
    assert.deepEqual(lookups.get(`web-0.web.${NS}`)?.addresses, [pods[0]])
    assert.deepEqual(lookups.get('web-1.web')?.addresses, [pods[1]])
    const outside = lookups.get('example.com')
    assert.ok(outside, 'example.com was looked up')
    // getent's "not found" after the search list and the name itself, each answered NXDOMAIN.
    assert.equal(outside.code, 2)
    assert.deepEqual(outside.addresses, [])
    assert.ok(
      outside.elapsedMs < RESOLVER_TIMEOUT_MS / 5,
      `example.com failed in ${outside.elapsedMs} ms, well under the resolver's ${RESOLVER_TIMEOUT_MS} ms timeout`
    )
    assert.equal(nslookup, 'NXDOMAIN', `${CLUSTER_DNS_IP} answers example.com. with NXDOMAIN`)
  })
})
