// `metactl tree` on the PodService, on the real control plane: the engine (in-process) creates
// the Pod and the Service; a ConfigMap owned by the Pod stands in for a grandchild.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { CONFIGMAPS, NAMESPACES } from 'metacontroller-ts/kube'
import { startControlPlane, waitFor } from 'metacontroller-ts/testing'
import type { ControlPlane } from 'metacontroller-ts/testing'
import type { PodService } from '../../examples/podservice/hook.js'
import {
  PODS,
  PODSERVICES,
  loadSample,
  metacontrollerCrdFiles,
  MANIFESTS,
  startPodServiceStack,
} from '../../examples/podservice/stack.js'
import type { PodServiceStack } from '../../examples/podservice/stack.js'
import { metactl } from '../support/run-metactl.js'

describe('metactl tree', () => {
  const namespace = `tree-${randomBytes(3).toString('hex')}`
  let plane: ControlPlane
  let stack: PodServiceStack

  before(async () => {
    plane = await startControlPlane({ crds: [...metacontrollerCrdFiles(), MANIFESTS.crd] })
    stack = await startPodServiceStack(plane.config, plane.client, 'in-process')
    const sample = loadSample(namespace)
    await plane.client.create(NAMESPACES, sample.namespace)
    await plane.client.create(PODSERVICES, sample.podService)
    await waitFor(
      async () => {
        const parent = await plane.client.get<PodService>(PODSERVICES, 'nginx', { namespace })
        return parent.status?.serviceAddress !== undefined
      },
      { timeoutMs: 30_000, description: 'the PodService status' }
    )
    const pod = await plane.client.get(PODS, 'nginx', { namespace })
    await plane.client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'owned-by-pod',
        namespace,
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Pod', name: 'nginx', uid: pod.metadata.uid ?? '' },
        ],
      },
    })
  })

  after(async () => {
    await stack.stop()
    await plane.client.delete(NAMESPACES, namespace).catch(() => undefined)
    await plane.stop()
  })

  it('prints the PodService, its Pod and Service, and the Pod’s ConfigMap', async () => {
    const env = { KUBECONFIG: plane.kubeconfigPath }
    const { code, stdout, stderr } = await metactl(['tree', 'podservice/nginx', '-n', namespace], {
      env,
    })
    assert.equal(code, 0, stderr)
    const rows = stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split(/\s{2,}/))
    assert.deepEqual(rows[0], ['NAMESPACE', 'NAME', 'READY', 'STATUS', 'AGE'])
    assert.deepEqual(
      rows.slice(1).map((row) => row.slice(0, 2)),
      [
        [namespace, 'PodService/nginx'],
        [namespace, '├─Pod/nginx'],
        [namespace, '│ └─ConfigMap/owned-by-pod'],
        [namespace, '└─Service/nginx'],
      ]
    )
    // No nodes: the Pod stays Pending, and the hook's Ready condition says so.
    assert.deepEqual(rows[1]?.slice(2, 4), ['False', 'PodPending'])
    assert.match(rows[4]?.[3] ?? '', /^ClusterIP \d+\.\d+\.\d+\.\d+$/)
  })

  it('resolves plural and group-qualified names, and names a missing object', async () => {
    const env = { KUBECONFIG: plane.kubeconfigPath }
    const plural = await metactl(['tree', 'podservices.homelabz.com.br/nginx', '-n', namespace], {
      env,
    })
    assert.equal(plural.code, 0, plural.stderr)
    const missing = await metactl(['tree', 'podservice/nope', '-n', namespace], { env })
    assert.equal(missing.code, 1)
    assert.equal(
      missing.stderr.trim(),
      `metactl: PodService nope not found in namespace ${namespace}`
    )
    const unknown = await metactl(['tree', 'gizmo/x'], { env })
    assert.match(unknown.stderr, /the server has no resource type "gizmo"/)
  })
})
