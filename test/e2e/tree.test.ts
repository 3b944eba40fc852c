// `metactl tree` on the real control plane: a custom parent owning a Pod and a Service, and a
// ConfigMap owned by the Pod (a grandchild), linked by ownerReferences as the engine links them.
// The parent is a kind of its own, so no engine of another test syncs it while this one runs.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import type { KubeObject, OwnerReference } from 'metacontroller-ts'
import { CONFIGMAPS, NAMESPACES, PODS, SERVICES } from 'metacontroller-ts/kube'
import type { ResourceRef } from 'metacontroller-ts/kube'
import { startControlPlane } from 'metacontroller-ts/testing'
import type { ControlPlane } from 'metacontroller-ts/testing'
import { metactl } from '../support/run-metactl.js'

const APPS: ResourceRef = {
  group: 'tree.example.com',
  version: 'v1',
  resource: 'treeapps',
  namespaced: true,
}
const CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'treeapps.tree.example.com' },
  spec: {
    group: 'tree.example.com',
    scope: 'Namespaced',
    names: { kind: 'TreeApp', plural: 'treeapps', singular: 'treeapp', shortNames: ['ta'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      },
    ],
  },
}

function ownedBy(owner: KubeObject): OwnerReference[] {
  return [
    {
      apiVersion: owner.apiVersion,
      kind: owner.kind,
      name: owner.metadata.name ?? '',
      uid: owner.metadata.uid ?? '',
      controller: true,
    },
  ]
}

describe('metactl tree', () => {
  const namespace = `tree-${randomBytes(3).toString('hex')}`
  let plane: ControlPlane

  before(async () => {
    plane = await startControlPlane({ crds: [CRD] })
    const { client } = plane
    await client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    })
    const app = await client.create(APPS, {
      apiVersion: 'tree.example.com/v1',
      kind: 'TreeApp',
      metadata: { name: 'web', namespace },
    })
    await client.updateStatus(APPS, {
      ...app,
      status: { conditions: [{ type: 'Ready', status: 'False', reason: 'PodPending' }] },
    })
    const pod = await client.create(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace, ownerReferences: ownedBy(app) },
      // No node matches, so the Pod stays Pending whether or not the cluster has nodes.
      spec: {
        containers: [{ name: 'web', image: 'nginx' }],
        nodeSelector: { 'tree.example.com/no-such-node': 'true' },
      },
    })
    await client.create(SERVICES, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace, ownerReferences: ownedBy(app) },
      spec: { ports: [{ port: 80 }] },
    })
    await client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'owned-by-pod', namespace, ownerReferences: ownedBy(pod) },
    })
  })

  after(async () => {
    await plane.client.delete(NAMESPACES, namespace).catch(() => undefined)
    await plane.stop()
  })

  it('prints the parent, its Pod and Service, and the Pod’s ConfigMap', async () => {
    const env = { KUBECONFIG: plane.kubeconfigPath }
    const { code, stdout, stderr } = await metactl(['tree', 'treeapp/web', '-n', namespace], {
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
        [namespace, 'TreeApp/web'],
        [namespace, '├─Pod/web'],
        [namespace, '│ └─ConfigMap/owned-by-pod'],
        [namespace, '└─Service/web'],
      ]
    )
    assert.deepEqual(rows[1]?.slice(2, 4), ['False', 'PodPending'])
    // Unschedulable: the Pod stays Pending; the Service shows its address.
    assert.equal(rows[2]?.[3], 'Pending')
    assert.match(rows[4]?.[3] ?? '', /^ClusterIP \d+\.\d+\.\d+\.\d+$/)
  })

  it('resolves plural, short and group-qualified names, and names a missing object', async () => {
    const env = { KUBECONFIG: plane.kubeconfigPath }
    for (const kind of ['treeapps', 'ta', 'treeapps.tree.example.com', 'TreeApp']) {
      const result = await metactl(['tree', `${kind}/web`, '-n', namespace], { env })
      assert.equal(result.code, 0, `${kind}: ${result.stderr}`)
    }
    const missing = await metactl(['tree', 'treeapp/nope', '-n', namespace], { env })
    assert.equal(missing.code, 1)
    assert.equal(missing.stderr.trim(), `metactl: TreeApp nope not found in namespace ${namespace}`)
    const unknown = await metactl(['tree', 'gizmo/x'], { env })
    assert.match(unknown.stderr, /the server has no resource type "gizmo"/)
  })
})
