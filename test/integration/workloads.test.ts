// Proves that Pods run on the local cluster with simulated nodes: kube-scheduler binds them, KWOK
// plays the kubelet (Running, Ready, a Pod IP, Job Pods succeeding, deleted Pods terminating) and
// kube-controller-manager's workload controllers (Deployment, ReplicaSet, Job, StatefulSet,
// EndpointSlice) act on them. Runs against the plane scripts/run-tests.mjs starts for the tier
// (with one node), or starts its own with one node when run alone.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import { NotFoundError } from '../../src/kube/api-error.js'
import type { ResourceRef } from '../../src/kube/dynamic-client.js'
import { readWatchEvents } from '../../src/kube/watch-event.js'
import { NAMESPACES, PODS, SERVICES } from '../../src/kube/well-known-resources.js'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { isNodeReady, NODES } from '../../src/cluster/simulated-nodes.js'

const DEPLOYMENTS: ResourceRef = {
  group: 'apps',
  version: 'v1',
  resource: 'deployments',
  namespaced: true,
}
const STATEFULSETS: ResourceRef = {
  group: 'apps',
  version: 'v1',
  resource: 'statefulsets',
  namespaced: true,
}
const DAEMONSETS: ResourceRef = {
  group: 'apps',
  version: 'v1',
  resource: 'daemonsets',
  namespaced: true,
}
const SERVICEACCOUNTS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'serviceaccounts',
  namespaced: true,
}
const JOBS: ResourceRef = { group: 'batch', version: 'v1', resource: 'jobs', namespaced: true }
const ENDPOINTSLICES: ResourceRef = {
  group: 'discovery.k8s.io',
  version: 'v1',
  resource: 'endpointslices',
  namespaced: true,
}
const WAIT = { timeoutMs: 30_000, intervalMs: 100 }

interface PodView extends KubeObject {
  spec?: { nodeName?: string; containers: { name: string }[] }
  status?: {
    phase?: string
    podIP?: string
    conditions?: { type: string; status: string }[]
    containerStatuses?: { name: string; ready: boolean; state?: Record<string, unknown> }[]
  }
}

function isPodReady(pod: PodView): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false
}

// The image is never pulled: the simulated kubelet only reports the container running.
const POD_SPEC = {
  containers: [{ name: 'app', image: 'registry.invalid/app:1', ports: [{ containerPort: 80 }] }],
}

function podTemplate(labels: Record<string, string>): Record<string, unknown> {
  return { metadata: { labels }, spec: POD_SPEC }
}

describe('a local cluster with simulated nodes', () => {
  let plane: ControlPlane
  let ns: string

  before(async () => {
    plane = await startControlPlane()
    ns = `workloads-${randomBytes(3).toString('hex')}`
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    })
  })

  after(async () => {
    await plane.client.delete(NAMESPACES, ns).catch(() => undefined)
    await plane.stop()
  })

  const get = <T extends KubeObject>(ref: ResourceRef, name: string): Promise<T> =>
    plane.client.get<T>(ref, name, { namespace: ns })

  const createPod = (name: string): Promise<KubeObject> =>
    plane.client.create(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: ns },
      spec: POD_SPEC,
    })

  it('has a Ready node with capacity for 110 Pods', async () => {
    const nodes = await plane.client.list(NODES)
    const ready = nodes.items.filter(isNodeReady)
    assert.ok(ready.length >= 1, `no Ready node among ${nodes.items.length}`)
    const capacity = (ready[0]?.['status'] as { capacity?: { pods?: string } }).capacity
    assert.ok(Number(capacity?.pods) >= 110, `pods capacity ${String(capacity?.pods)}`)
  })

  it('schedules a Pod, which becomes Running and Ready with a Pod IP', async () => {
    await createPod('single')
    const pod = await waitFor(
      async () => {
        const p = await get<PodView>(PODS, 'single')
        return isPodReady(p) ? p : undefined
      },
      { ...WAIT, description: 'Pod single to become Ready' }
    )
    assert.equal(pod.status?.phase, 'Running')
    assert.ok(pod.spec?.nodeName, 'the Pod is bound to a node')
    assert.match(pod.status.podIP ?? '', /^\d+\.\d+\.\d+\.\d+$/)
    assert.deepEqual(
      pod.status.containerStatuses?.map((c) => [c.name, c.ready, Object.keys(c.state ?? {})]),
      [['app', true, ['running']]]
    )
  })

  it('terminates a deleted Pod (no kubelet would leave it Terminating forever)', async () => {
    await createPod('doomed')
    await waitFor(async () => isPodReady(await get<PodView>(PODS, 'doomed')), {
      ...WAIT,
      description: 'Pod doomed to become Ready',
    })
    // The default grace period (30 s) applies: the Pod is only removed when "the kubelet" says so.
    await plane.client.delete(PODS, 'doomed', { namespace: ns })
    const started = Date.now()
    await waitFor(
      async () => {
        try {
          await get(PODS, 'doomed')
          return false
        } catch (error) {
          if (error instanceof NotFoundError) return true
          throw error
        }
      },
      { ...WAIT, timeoutMs: 20_000, description: 'Pod doomed to be removed' }
    )
    assert.ok(Date.now() - started < 20_000)
  })

  it('brings a Deployment to its ready replicas, and a Service gets their endpoints', async () => {
    const labels = { app: 'web' }
    await plane.client.create(DEPLOYMENTS, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: ns },
      spec: { replicas: 3, selector: { matchLabels: labels }, template: podTemplate(labels) },
    })
    await plane.client.create(SERVICES, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: ns },
      spec: { selector: labels, ports: [{ port: 80, targetPort: 80 }] },
    })
    const deployment = await waitFor(
      async () => {
        const d = await get<KubeObject & { status?: Record<string, number> }>(DEPLOYMENTS, 'web')
        return d.status?.['readyReplicas'] === 3 && d.status['availableReplicas'] === 3
          ? d
          : undefined
      },
      { ...WAIT, description: 'Deployment web to have 3 ready and available replicas' }
    )
    assert.equal(deployment.status?.['updatedReplicas'], 3)
    const pods = await plane.client.list<PodView>(PODS, { namespace: ns, labelSelector: 'app=web' })
    assert.equal(pods.items.filter(isPodReady).length, 3)
    const podIps = pods.items.map((p) => p.status?.podIP).sort()
    await waitFor(
      async () => {
        const slices = await plane.client.list<
          KubeObject & { endpoints?: { addresses: string[] }[] }
        >(ENDPOINTSLICES, { namespace: ns, labelSelector: 'kubernetes.io/service-name=web' })
        const addresses = slices.items.flatMap((s) => s.endpoints ?? []).flatMap((e) => e.addresses)
        return JSON.stringify(addresses.sort()) === JSON.stringify(podIps)
      },
      { ...WAIT, description: 'the EndpointSlice of Service web to list the 3 Pod IPs' }
    )
  })

  it('runs a Job to completion', async () => {
    await plane.client.create(JOBS, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'once', namespace: ns },
      spec: {
        completions: 2,
        parallelism: 1,
        template: { spec: { ...POD_SPEC, restartPolicy: 'Never' } },
      },
    })
    const job = await waitFor(
      async () => {
        const j = await get<
          KubeObject & {
            status?: { succeeded?: number; conditions?: { type: string; status: string }[] }
          }
        >(JOBS, 'once')
        const complete = j.status?.conditions?.some(
          (c) => c.type === 'Complete' && c.status === 'True'
        )
        return complete === true ? j : undefined
      },
      { ...WAIT, description: 'Job once to complete' }
    )
    assert.equal(job.status?.succeeded, 2)
    const pods = await plane.client.list<PodView>(PODS, {
      namespace: ns,
      labelSelector: 'job-name=once',
    })
    assert.deepEqual(
      pods.items.map((p) => p.status?.phase),
      ['Succeeded', 'Succeeded']
    )
  })

  it('runs one DaemonSet Pod on every Ready, untainted node', async () => {
    // Untainted nodes only: a DaemonSet without tolerations skips e.g. a kind control-plane node.
    const nodes = (await plane.client.list(NODES)).items.filter(
      (n) =>
        isNodeReady(n) && (n['spec'] as { taints?: unknown[] } | undefined)?.taints === undefined
    )
    const labels = { app: 'agent' }
    await plane.client.create(DAEMONSETS, {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', namespace: ns },
      spec: { selector: { matchLabels: labels }, template: podTemplate(labels) },
    })
    const pods = await waitFor(
      async () => {
        const list = await plane.client.list<PodView>(PODS, {
          namespace: ns,
          labelSelector: 'app=agent',
        })
        const ready = list.items.filter(isPodReady)
        return ready.length === nodes.length ? ready : undefined
      },
      { ...WAIT, description: `a Ready agent Pod on each of ${nodes.length} node(s)` }
    )
    assert.deepEqual(
      pods.map((p) => p.spec?.nodeName).sort(),
      nodes.map((n) => n.metadata.name).sort()
    )
  })

  it('gives the namespace its default ServiceAccount (service-account controller)', async () => {
    const account = await waitFor(() => get(SERVICEACCOUNTS, 'default').catch(() => undefined), {
      ...WAIT,
      description: `ServiceAccount default in ${ns}`,
    })
    assert.equal(account.metadata.namespace, ns)
  })

  it('creates the Pods of a StatefulSet one by one, each after the previous is Ready', async () => {
    const list = await plane.client.list(PODS, { namespace: ns })
    const controller = new AbortController()
    const stream = await plane.client.watch(PODS, {
      namespace: ns,
      labelSelector: 'app=db',
      resourceVersion: list.metadata.resourceVersion ?? '',
      signal: controller.signal,
    })
    // The order in which Pods appeared and became Ready, as one sequence of events.
    const order: string[] = []
    const watched = (async () => {
      for await (const event of readWatchEvents(stream.body)) {
        const pod = event.object as PodView
        const name = pod.metadata.name ?? ''
        if (event.type === 'ADDED' && !order.includes(`created ${name}`))
          order.push(`created ${name}`)
        if (isPodReady(pod) && !order.includes(`ready ${name}`)) order.push(`ready ${name}`)
        if (order.length === 6) return
      }
    })()
    const labels = { app: 'db' }
    await plane.client.create(STATEFULSETS, {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: ns },
      spec: {
        replicas: 3,
        serviceName: 'db',
        selector: { matchLabels: labels },
        template: podTemplate(labels),
      },
    })
    await waitFor(
      async () =>
        (await get<KubeObject & { status?: { readyReplicas?: number } }>(STATEFULSETS, 'db')).status
          ?.readyReplicas === 3,
      { ...WAIT, description: 'StatefulSet db to have 3 ready replicas' }
    )
    let timer: NodeJS.Timeout | undefined
    try {
      await Promise.race([
        watched,
        new Promise((_, reject) => {
          timer = setTimeout(() => {
            reject(new Error(`watch saw only: ${order.join(', ')}`))
          }, 10_000)
        }),
      ])
    } finally {
      clearTimeout(timer)
      controller.abort()
    }
    assert.deepEqual(order, [
      'created db-0',
      'ready db-0',
      'created db-1',
      'ready db-1',
      'created db-2',
      'ready db-2',
    ])
  })
})
