import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import {
  CLUSTER_DNS_IP,
  CLUSTER_DNS_LABELS,
  clusterDnsObjects,
  corefile,
} from './cluster-dns-manifests.js'
import { readFileSync } from 'node:fs'
import { COREDNS_IMAGE, packagedCorednsModule } from './coredns-image.js'
import { SERVICE_CIDR } from './real-node-layout.js'

function find(kind: string): KubeObject {
  const object = clusterDnsObjects().find((o) => o.kind === kind)
  assert.ok(object, `${kind} is created`)
  return object
}

// The plugins the Corefile enables, one directive a line at the top level of its server block.
function directives(): string[] {
  return corefile()
    .split('\n')
    .filter((line) => /^ {4}[a-z]/.test(line))
    .map((line) => line.trim().split(/\s/)[0] ?? '')
}

describe('cluster DNS objects', () => {
  it('serves cluster.local and answers every other name itself, forwarding nothing', () => {
    const names = directives()
    assert.ok(names.includes('kubernetes'))
    assert.ok(!names.includes('forward') && !names.includes('proxy'))
    assert.match(corefile(), /kubernetes cluster\.local in-addr\.arpa ip6\.arpa \{/)
    assert.match(corefile(), /template ANY ANY \{\n\s+rcode NXDOMAIN\n\s+\}/)
  })

  it('enables only plugins tools/coredns links', () => {
    const main = readFileSync(`${packagedCorednsModule()}main.go`, 'utf8')
    const linked = [...main.matchAll(/coredns\/plugin\/([a-z0-9_]+)"/g)].map((m) => m[1])
    assert.deepEqual(
      directives().filter((d) => !linked.includes(d)),
      []
    )
  })

  it('puts kube-dns at the .10 of the service range, port 53 to the unprivileged port', () => {
    const [network] = SERVICE_CIDR.split('/')
    assert.equal(CLUSTER_DNS_IP, network?.replace(/\.0$/, '.10'))
    const spec = find('Service')['spec'] as {
      clusterIP: string
      selector: Record<string, string>
      ports: { port: number; targetPort: number; protocol: string }[]
    }
    assert.equal(spec.clusterIP, CLUSTER_DNS_IP)
    assert.deepEqual(spec.selector, CLUSTER_DNS_LABELS)
    assert.deepEqual(
      spec.ports.map((p) => `${p.port}/${p.protocol}->${p.targetPort}`),
      ['53/UDP->1053', '53/TCP->1053']
    )
    assert.match(corefile(), /^\.:1053 \{/)
  })

  it('runs CoreDNS as a non-root user without capabilities, from the imported image', () => {
    const pod = (find('Deployment')['spec'] as { template: { spec: Record<string, unknown> } })
      .template.spec
    assert.deepEqual(pod['securityContext'], {
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
    })
    const [container] = pod['containers'] as Record<string, unknown>[]
    assert.ok(container)
    assert.equal(container['image'], COREDNS_IMAGE)
    assert.equal(container['imagePullPolicy'], 'Never')
    assert.deepEqual(container['securityContext'], {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    })
    assert.equal(pod['dnsPolicy'], 'Default')
  })

  it('lets CoreDNS only list and watch what the kubernetes plugin reads', () => {
    const rules = find('ClusterRole')['rules'] as { verbs: string[]; resources: string[] }[]
    assert.deepEqual([...new Set(rules.flatMap((r) => r.verbs))].sort(), ['list', 'watch'])
    assert.deepEqual(rules.flatMap((r) => r.resources).sort(), [
      'endpointslices',
      'namespaces',
      'services',
    ])
  })
})
