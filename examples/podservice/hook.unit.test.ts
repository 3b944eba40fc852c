// Unit tests of the PodService hook, no cluster: every request goes through callCompositeHook,
// which validates the answer exactly as the engine does. Also checks that the manifests agree
// with the TypeScript controller and that the CRD admits every status field the hook writes
// (a pruned field would make the engine rewrite the status on every sync).
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { callCompositeHook } from 'metacontroller-ts'
import type { ObjectMap } from 'metacontroller-ts'
import { readManifestFile } from 'metacontroller-ts/testing'
import {
  CONTROLLER_NAME,
  DEFAULTS,
  NAME_LABEL,
  createPodServiceSync,
  podServiceController,
  podServiceControllerSpec,
  sync,
} from './hook.js'
import type {
  Ingress,
  Pod,
  PodService,
  PodServiceChild,
  PodServiceSpec,
  PodServiceStatus,
  Service,
} from './hook.js'
import { podQuantity } from './quantity.js'
import { MANIFESTS, loadSample } from './stack.js'

const NS = 'pocs-kubernetes-metacontroller'
const NOW = new Date('2026-01-02T03:04:05.678Z')
const clockSync = createPodServiceSync({ now: () => NOW })

function parentWith(spec: PodServiceSpec, extra: Partial<PodService> = {}): PodService {
  return {
    apiVersion: 'homelabz.com.br/v1',
    kind: 'PodService',
    metadata: { name: 'nginx', namespace: NS, uid: 'parent-uid', generation: 3 },
    spec,
    ...extra,
  }
}

const SAMPLE_SPEC: PodServiceSpec = {
  image: 'nginx:stable-alpine',
  port: 80,
  cpuReq: '50m',
  cpuLimit: '100m',
  memReq: '64Mi',
  memLimit: '128Mi',
}

function observed(...objects: PodServiceChild[]): ObjectMap<PodServiceChild> {
  const map: Record<string, Record<string, PodServiceChild>> = {
    'Pod.v1': {},
    'Service.v1': {},
    'Ingress.networking.k8s.io/v1': {},
  }
  for (const o of objects) {
    const type = `${o.kind}.${o.apiVersion}`
    const bucket = map[type] ?? (map[type] = {})
    bucket[`${o.metadata.namespace ?? NS}/${o.metadata.name ?? ''}`] = o
  }
  return map
}

function pod(status: Pod['status'], extra: Partial<Pod['metadata']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'nginx', namespace: NS, uid: 'pod-uid', ...extra },
    spec: { containers: [{ name: 'nginx', image: 'nginx:stable-alpine' }] },
    ...(status === undefined ? {} : { status }),
  }
}

function service(clusterIP?: string, port = 80): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'nginx', namespace: NS, uid: 'svc-uid' },
    spec: {
      type: 'ClusterIP',
      ...(clusterIP === undefined ? {} : { clusterIP }),
      ports: [{ name: 'http', port, targetPort: port, protocol: 'TCP' }],
    },
  }
}

function childOf<K extends PodServiceChild['kind']>(
  children: readonly PodServiceChild[],
  kind: K
): Extract<PodServiceChild, { kind: K }> | undefined {
  return children.find((c) => c.kind === kind) as Extract<PodServiceChild, { kind: K }> | undefined
}

function containerOf(
  children: readonly PodServiceChild[]
): NonNullable<Pod['spec']>['containers'][number] {
  const container = childOf(children, 'Pod')?.spec?.containers[0]
  assert.ok(container, 'the Pod has a container')
  return container
}

function statusOf(out: { status: PodServiceStatus | null }): PodServiceStatus {
  assert.ok(out.status, 'the hook returns a status')
  return out.status
}

describe('PodService hook: children', () => {
  it('builds the Pod and the Service from every field of the sample', async () => {
    const out = await callCompositeHook(sync, { parent: parentWith(SAMPLE_SPEC) })
    assert.deepEqual(out.children, [
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'nginx', labels: { [NAME_LABEL]: 'nginx' } },
        spec: {
          restartPolicy: 'OnFailure',
          containers: [
            {
              name: 'nginx',
              image: 'nginx:stable-alpine',
              ports: [{ containerPort: 80, name: 'http', protocol: 'TCP' }],
              resources: {
                limits: { cpu: '100m', memory: '128Mi' },
                requests: { cpu: '50m', memory: '64Mi' },
              },
            },
          ],
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'nginx', labels: { [NAME_LABEL]: 'nginx' } },
        spec: {
          type: 'ClusterIP',
          selector: { [NAME_LABEL]: 'nginx' },
          ports: [{ name: 'http', port: 80, targetPort: 80, protocol: 'TCP' }],
        },
      },
    ])
  })

  it('uses every field: another image, port and resources', async () => {
    const out = await callCompositeHook(sync, {
      parent: parentWith({
        image: 'httpd:2.4',
        port: 8080,
        cpuReq: '200m',
        cpuLimit: '1',
        memReq: '256Mi',
        memLimit: '1Gi',
      }),
    })
    const container = containerOf(out.children)
    assert.equal(container.image, 'httpd:2.4')
    assert.deepEqual(container.ports, [{ containerPort: 8080, name: 'http', protocol: 'TCP' }])
    assert.deepEqual(container.resources, {
      limits: { cpu: '1', memory: '1Gi' },
      requests: { cpu: '200m', memory: '256Mi' },
    })
    assert.deepEqual(childOf(out.children, 'Service')?.spec?.ports, [
      { name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' },
    ])
  })

  it('defaults every missing field', async () => {
    const out = await callCompositeHook(sync, { parent: parentWith({}) })
    const container = containerOf(out.children)
    assert.equal(container.image, 'nginx:latest')
    assert.deepEqual(container.ports, [{ containerPort: 80, name: 'http', protocol: 'TCP' }])
    assert.deepEqual(container.resources, {
      limits: { cpu: '50m', memory: '64Mi' },
      requests: { cpu: '10m', memory: '32Mi' },
    })
    assert.equal(childOf(out.children, 'Service')?.spec?.ports?.[0]?.port, 80)
  })

  const fields: [keyof PodServiceSpec, (p: Pod) => unknown, unknown][] = [
    ['image', (p) => p.spec?.containers[0]?.image, DEFAULTS.image],
    ['port', (p) => p.spec?.containers[0]?.ports?.[0]?.containerPort, DEFAULTS.port],
    ['cpuLimit', (p) => p.spec?.containers[0]?.resources?.limits?.['cpu'], DEFAULTS.cpuLimit],
    ['memLimit', (p) => p.spec?.containers[0]?.resources?.limits?.['memory'], DEFAULTS.memLimit],
    ['cpuReq', (p) => p.spec?.containers[0]?.resources?.requests?.['cpu'], DEFAULTS.cpuReq],
    ['memReq', (p) => p.spec?.containers[0]?.resources?.requests?.['memory'], DEFAULTS.memReq],
  ]
  for (const [field, read, fallback] of fields) {
    it(`defaults ${field} alone to ${String(fallback)} and keeps the other fields`, async () => {
      const spec = Object.fromEntries(
        Object.entries(SAMPLE_SPEC).filter(([key]) => key !== field)
      ) as PodServiceSpec
      const out = await callCompositeHook(sync, { parent: parentWith(spec) })
      const built = childOf(out.children, 'Pod')
      assert.ok(built)
      assert.equal(read(built), fallback)
      for (const [other, readOther] of fields) {
        if (other !== field) assert.equal(readOther(built), SAMPLE_SPEC[other])
      }
    })
  }

  it('treats an empty image as missing', async () => {
    const out = await callCompositeHook(sync, { parent: parentWith({ image: '' }) })
    assert.equal(childOf(out.children, 'Pod')?.spec?.containers[0]?.image, 'nginx:latest')
  })

  it('sends quantities the way the API server stores them, so the Pod never looks changed', async () => {
    const out = await callCompositeHook(sync, {
      parent: parentWith({ image: 'x', cpuReq: '0.1', cpuLimit: '1000m', memLimit: '0.5Gi' }),
    })
    assert.deepEqual(childOf(out.children, 'Pod')?.spec?.containers[0]?.resources, {
      limits: { cpu: '1', memory: '512Mi' },
      requests: { cpu: '100m', memory: '32Mi' },
    })
  })

  it('adds no Ingress without spec.ingress', async () => {
    const out = await callCompositeHook(sync, { parent: parentWith(SAMPLE_SPEC) })
    assert.deepEqual(
      out.children.map((c) => c.kind),
      ['Pod', 'Service']
    )
    assert.equal(statusOf(out).ingresses, undefined)
  })

  it('adds an Ingress for spec.ingress, with path / and the default class', async () => {
    const out = await callCompositeHook(sync, {
      parent: parentWith({ ...SAMPLE_SPEC, ingress: { host: 'nginx.example.com' } }),
    })
    assert.deepEqual(childOf(out.children, 'Ingress'), {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'nginx', labels: { [NAME_LABEL]: 'nginx' } },
      spec: {
        rules: [
          {
            host: 'nginx.example.com',
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: 'nginx', port: { number: 80 } } },
                },
              ],
            },
          },
        ],
      },
    } satisfies Ingress)
    assert.equal(statusOf(out).ingresses, 0)
  })

  it('uses the Ingress path, class and the Service port', async () => {
    const out = await callCompositeHook(sync, {
      parent: parentWith({
        ...SAMPLE_SPEC,
        port: 8080,
        ingress: { host: 'web.example.com', path: '/app', class: 'nginx' },
      }),
    })
    const ingress = childOf(out.children, 'Ingress')
    assert.equal(ingress?.spec?.ingressClassName, 'nginx')
    assert.deepEqual(ingress.spec.rules?.[0]?.http?.paths[0], {
      path: '/app',
      pathType: 'Prefix',
      backend: { service: { name: 'nginx', port: { number: 8080 } } },
    })
  })
})

describe('PodService hook: status', () => {
  it('counts the observed children', async () => {
    const none = await callCompositeHook(sync, {
      parent: parentWith(SAMPLE_SPEC),
      children: observed(),
    })
    assert.equal(statusOf(none).pods, 0)
    assert.equal(statusOf(none).services, 0)
    const both = await callCompositeHook(sync, {
      parent: parentWith(SAMPLE_SPEC),
      children: observed(pod({ phase: 'Pending' }), service('10.0.0.12')),
    })
    assert.equal(statusOf(both).pods, 1)
    assert.equal(statusOf(both).services, 1)
  })

  it('counts an observed Ingress', async () => {
    const ingress: Ingress = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'nginx', namespace: NS },
    }
    const out = await callCompositeHook(sync, {
      parent: parentWith({ ...SAMPLE_SPEC, ingress: { host: 'a.example.com' } }),
      children: observed(ingress),
    })
    assert.equal(statusOf(out).ingresses, 1)
  })

  it('reports the Service address and DNS name once the Service has a cluster IP', async () => {
    const out = await callCompositeHook(sync, {
      parent: parentWith(SAMPLE_SPEC),
      children: observed(service('10.0.0.12', 8080)),
    })
    assert.equal(statusOf(out).serviceAddress, '10.0.0.12:8080')
    assert.equal(statusOf(out).serviceDNS, `nginx.${NS}.svc.cluster.local`)
  })

  it('reports no address before the Service exists or has a cluster IP', async () => {
    const missing = await callCompositeHook(sync, { parent: parentWith(SAMPLE_SPEC) })
    assert.equal(statusOf(missing).serviceAddress, undefined)
    assert.equal(statusOf(missing).serviceDNS, undefined)
    const noIp = await callCompositeHook(sync, {
      parent: parentWith(SAMPLE_SPEC),
      children: observed(service()),
    })
    assert.equal(statusOf(noIp).serviceAddress, undefined)
    assert.equal(statusOf(noIp).serviceDNS, `nginx.${NS}.svc.cluster.local`)
    const headless = await callCompositeHook(sync, {
      parent: parentWith(SAMPLE_SPEC),
      children: observed(service('None')),
    })
    assert.equal(statusOf(headless).serviceAddress, undefined)
  })

  it('uses another cluster domain when told', async () => {
    const hook = createPodServiceSync({ clusterDomain: 'home.arpa' })
    const out = await callCompositeHook(hook, {
      parent: parentWith(SAMPLE_SPEC),
      children: observed(service('10.0.0.12')),
    })
    assert.equal(statusOf(out).serviceDNS, `nginx.${NS}.svc.home.arpa`)
  })

  const readiness: [string, Pod | undefined, string, string][] = [
    ['no Pod', undefined, 'False', 'PodMissing'],
    ['a Pending Pod (no nodes)', pod({ phase: 'Pending' }), 'False', 'PodPending'],
    ['a Pod without status', pod(undefined), 'False', 'PodPending'],
    [
      'a Running, ready Pod',
      pod({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }),
      'True',
      'PodReady',
    ],
    [
      'a Running Pod that is not ready',
      pod({ phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] }),
      'False',
      'PodNotReady',
    ],
    ['a Failed Pod', pod({ phase: 'Failed' }), 'False', 'PodFailed'],
    ['a Succeeded Pod', pod({ phase: 'Succeeded' }), 'False', 'PodSucceeded'],
    ['a Pod in an unknown phase', pod({ phase: 'Unknown' }), 'Unknown', 'PodUnknown'],
    [
      'a Pod being deleted',
      pod({ phase: 'Running' }, { deletionTimestamp: '2026-01-01T00:00:00Z' }),
      'False',
      'PodTerminating',
    ],
  ]
  for (const [what, observedPod, status, reason] of readiness) {
    it(`sets Ready ${status} (${reason}) for ${what}`, async () => {
      const out = await callCompositeHook(clockSync, {
        parent: parentWith(SAMPLE_SPEC),
        children: observedPod === undefined ? observed() : observed(observedPod),
      })
      const [condition, ...others] = statusOf(out).conditions
      assert.equal(others.length, 0)
      assert.equal(condition?.type, 'Ready')
      assert.equal(condition.status, status)
      assert.equal(condition.reason, reason)
      assert.match(condition.message, /Pod nginx /)
      assert.equal(condition.lastTransitionTime, '2026-01-02T03:04:05Z')
      assert.equal(condition.observedGeneration, 3)
    })
  }

  it('says a Pending Pod is not scheduled when it has no node', async () => {
    const out = await callCompositeHook(sync, {
      parent: parentWith(SAMPLE_SPEC),
      children: observed(pod({ phase: 'Pending' })),
    })
    assert.equal(
      statusOf(out).conditions[0]?.message,
      'Pod nginx is Pending (not scheduled to a node yet)'
    )
  })

  it('keeps lastTransitionTime while Ready keeps its status, and moves it when it changes', async () => {
    const earlier = '2025-12-31T23:00:00Z'
    const previous: PodServiceStatus = {
      pods: 1,
      services: 1,
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'PodMissing',
          message: 'Pod nginx does not exist yet',
          lastTransitionTime: earlier,
        },
      ],
    }
    const same = await callCompositeHook(clockSync, {
      parent: parentWith(SAMPLE_SPEC, { status: previous }),
      children: observed(pod({ phase: 'Pending' })),
    })
    assert.equal(statusOf(same).conditions[0]?.reason, 'PodPending')
    assert.equal(statusOf(same).conditions[0]?.lastTransitionTime, earlier)
    const flipped = await callCompositeHook(clockSync, {
      parent: parentWith(SAMPLE_SPEC, { status: previous }),
      children: observed(
        pod({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] })
      ),
    })
    assert.equal(statusOf(flipped).conditions[0]?.status, 'True')
    assert.equal(statusOf(flipped).conditions[0]?.lastTransitionTime, '2026-01-02T03:04:05Z')
  })

  it("takes a running Pod's Ready time, so a parent whose status is behind gets the same answer", async () => {
    const podReadySince = '2026-01-01T10:00:00Z'
    const readyPod = pod({
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: podReadySince }],
    })
    const behind: PodServiceStatus = {
      pods: 1,
      services: 1,
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'PodPending',
          message: 'Pod nginx is Pending',
          lastTransitionTime: '2025-12-31T23:00:00Z',
        },
      ],
    }
    const times = await Promise.all(
      [parentWith(SAMPLE_SPEC, { status: behind }), parentWith(SAMPLE_SPEC)].map(async (parent) => {
        const out = await callCompositeHook(clockSync, { parent, children: observed(readyPod) })
        return statusOf(out).conditions[0]?.lastTransitionTime
      })
    )
    assert.deepEqual(times, [podReadySince, podReadySince])
  })

  it('answers the same status when called again with its own status (no write loop)', async () => {
    const children = observed(pod({ phase: 'Pending' }), service('10.0.0.12'))
    const first = await callCompositeHook(sync, { parent: parentWith(SAMPLE_SPEC), children })
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const again = await callCompositeHook(sync, {
      parent: parentWith(SAMPLE_SPEC, { status: statusOf(first) }),
      children,
    })
    assert.deepEqual(again.status, first.status)
  })

  it('leaves observedGeneration to the engine', async () => {
    const out = await callCompositeHook(sync, { parent: parentWith(SAMPLE_SPEC) })
    assert.equal(statusOf(out).observedGeneration, undefined)
  })
})

// The API server's answers, read back from Pods created with each value (kube-apiserver
// v1.37.2, `kubectl create --dry-run=server`), canonical texts kept, odd ones included.
const STORED_QUANTITIES: [string, string][] = [
  ['100m', '100m'],
  ['0.1', '100m'],
  ['0.5', '500m'],
  ['.5', '500m'],
  ['1', '1'],
  ['1000m', '1'],
  ['1500m', '1500m'],
  ['1.5', '1500m'],
  ['2.5', '2500m'],
  ['3000m', '3'],
  ['0.05', '50m'],
  ['0', '0'],
  ['0m', '0'],
  ['1000', '1k'],
  ['1500', '1500'],
  ['1000k', '1M'],
  ['1.2k', '1200'],
  ['5000M', '5G'],
  ['64Mi', '64Mi'],
  ['1024Mi', '1Gi'],
  ['0.5Gi', '512Mi'],
  ['1.5Gi', '1536Mi'],
  ['1.5Mi', '1536Ki'],
  ['0.5Ki', '512'],
  ['1024Ki', '1Mi'],
  ['0.1Mi', '104857600m'],
  ['0.001Ki', '1024m'],
  ['1.0001Ki', '1024103m'],
  ['128974848', '128974848'],
  ['129e6', '129e6'],
  ['1e3', '1e3'],
  ['1E3', '1E3'],
  ['12e2', '1200'],
  ['1.5e3', '1500'],
  ['1.5e-2', '1.5e-2'],
  ['1e-9', '1e-3'],
  ['00100m', '00100m'],
  ['+1', '+1'],
  ['0001Ki', '0001Ki'],
  ['5.', '5.'],
  ['1.G', '1.G'],
  ['0.0000000001', '1m'],
  ['100u', '1m'],
  ['1500u', '2m'],
  ['1000000u', '1'],
  ['12345678901234n', '12345679m'],
  ['1000E', '1'],
  ['9Ei', '9223372036854775807'],
]

describe('podQuantity', () => {
  for (const [input, stored] of STORED_QUANTITIES) {
    it(`${input} is stored as ${stored}`, () => {
      assert.equal(podQuantity(input), stored)
    })
  }

  it('returns undefined for text that is not a quantity', () => {
    for (const text of ['', 'lots', '1x', '1 Gi', 'Mi', '.', '1e', '--1']) {
      assert.equal(podQuantity(text), undefined, text)
    }
  })
})

describe('PodService manifests', () => {
  const withoutHooks = (spec: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(Object.entries(spec).filter(([key]) => key !== 'hooks'))

  it('controller.yaml is the TypeScript controller, calling the hook on 127.0.0.1:8080', () => {
    const [controller] = readManifestFile(MANIFESTS.controller)
    assert.equal(controller?.metadata.name, CONTROLLER_NAME)
    const spec = controller['spec'] as Record<string, unknown>
    assert.deepEqual(withoutHooks(spec), withoutHooks(podServiceControllerSpec))
    assert.deepEqual(spec['hooks'], {
      sync: { webhook: { url: 'http://127.0.0.1:8080/sync' } },
    })
    assert.equal(podServiceController.name, CONTROLLER_NAME)
  })

  it('controller-in-cluster.yaml is the same controller, calling the hook Service', () => {
    const [controller] = readManifestFile(MANIFESTS.controllerInCluster)
    assert.equal(controller?.metadata.name, CONTROLLER_NAME)
    const spec = controller['spec'] as Record<string, unknown>
    assert.deepEqual(withoutHooks(spec), withoutHooks(podServiceControllerSpec))
    assert.deepEqual(spec['hooks'], {
      sync: {
        webhook: {
          service: { name: 'podservice-hook', namespace: 'metacontroller', port: 80 },
          path: '/sync',
        },
      },
    })
  })

  it('sample.yaml is nginx in pocs-kubernetes-metacontroller with the issue values', () => {
    const { namespace, podService } = loadSample()
    assert.equal(namespace.metadata.name, NS)
    assert.equal(podService.metadata.name, 'nginx')
    assert.equal(podService.metadata.namespace, NS)
    assert.deepEqual(podService.spec, SAMPLE_SPEC)
  })

  it('the CRD admits every status field the hook writes, and observedGeneration', async () => {
    const [crd] = readManifestFile(MANIFESTS.crd)
    const version = (crd?.['spec'] as { versions: Record<string, unknown>[] }).versions[0]
    const schema = (version?.['schema'] as { openAPIV3Schema: Schema }).openAPIV3Schema
    const status = schema.properties?.['status']
    const fullSpec: PodServiceSpec = { ...SAMPLE_SPEC, ingress: { host: 'a.example.com' } }
    const out = await callCompositeHook(sync, {
      parent: {
        ...parentWith(fullSpec),
        metadata: { name: 'nginx', namespace: NS, generation: 1 },
      },
      children: observed(pod({ phase: 'Pending' }), service('10.0.0.12')),
    })
    const written = { ...statusOf(out), observedGeneration: 1 }
    for (const key of Object.keys(written)) {
      assert.ok(status?.properties?.[key], `status.${key} is in the CRD schema`)
    }
    const conditionSchema = status?.properties?.['conditions']?.items
    for (const key of Object.keys(written.conditions[0] ?? {})) {
      assert.ok(conditionSchema?.properties?.[key], `status.conditions[].${key} is in the schema`)
    }
    const specSchema = schema.properties?.['spec']
    for (const key of Object.keys(fullSpec)) {
      assert.ok(specSchema?.properties?.[key], `spec.${key} is in the CRD schema`)
    }
  })

  it('the CRD has the printer columns of the issue', () => {
    const [crd] = readManifestFile(MANIFESTS.crd)
    const version = (crd?.['spec'] as { versions: Record<string, unknown>[] }).versions[0]
    const columns = version?.['additionalPrinterColumns'] as { name: string }[]
    assert.deepEqual(
      columns.map((c) => c.name),
      ['Image', 'Port', 'Pods', 'Ready', 'Address', 'Age']
    )
  })
})

interface Schema {
  properties?: Record<string, Schema>
  items?: Schema
}
