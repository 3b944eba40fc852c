// The typed children map, checked by the compiler (the @ts-expect-error lines fail the
// type-check if the types get looser) and at run time through callCompositeHook.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../core/kube-object.js'
import { callCompositeHook } from './call-hook.js'
import { defineCompositeHook } from './hook-types.js'
import type { ChildrenMap } from './hook-types.js'
import type {
  ClusterRoleBinding,
  ConfigMap,
  Deployment,
  Namespace,
  ResourceQuota,
  RoleBinding,
} from './index.js'
import { countObserved, listObserved } from './object-helpers.js'

const parent: KubeObject = { apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 'a' } }

const sync = defineCompositeHook<KubeObject, ConfigMap | Deployment>(({ children }) => {
  const maps: ConfigMap[] = listObserved(children, 'ConfigMap.v1')
  const deployments: Deployment[] = listObserved(children, 'Deployment.apps/v1')
  // @ts-expect-error: the controller has no Secret children
  listObserved(children, 'Secret.v1')
  // @ts-expect-error: entries are typed by key; ConfigMaps are not Deployments
  const wrong: Deployment[] = listObserved(children, 'ConfigMap.v1')
  assert.ok(Array.isArray(wrong))
  const replicas = deployments.map((d) => d.spec?.replicas ?? 1).reduce((a, b) => a + b, 0)
  return {
    status: { configMaps: maps.length, replicas },
    children: [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'settings' },
        data: { keys: String(countObserved(children, 'ConfigMap.v1')) },
      },
    ],
  }
})

describe('typed children', () => {
  it('keys children by Kind.apiVersion with each entry typed, and runs', async () => {
    const children: ChildrenMap<ConfigMap | Deployment> = {
      'ConfigMap.v1': { 'ns/settings': { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} } },
      'Deployment.apps/v1': {
        'ns/web': { apiVersion: 'apps/v1', kind: 'Deployment', spec: { replicas: 3 } as never },
      },
    }
    const out = await callCompositeHook(sync, { parent, children })
    assert.deepEqual(out.status, { configMaps: 1, replicas: 3 })
    assert.deepEqual((out.children[0] as ConfigMap | undefined)?.data, { keys: '1' })
  })
})

describe('built-in kinds by name', () => {
  it('exports the kinds a tenant controller writes, each keyed by its literal Kind.apiVersion', async () => {
    type Written = Namespace | ResourceQuota | RoleBinding | ClusterRoleBinding
    const tenantSync = defineCompositeHook<KubeObject, Written>(({ children }) => {
      const namespaces: Namespace[] = listObserved(children, 'Namespace.v1')
      const quotas: ResourceQuota[] = listObserved(children, 'ResourceQuota.v1')
      const bindings: ClusterRoleBinding[] = listObserved(
        children,
        'ClusterRoleBinding.rbac.authorization.k8s.io/v1'
      )
      return {
        status: { seen: namespaces.length + quotas.length + bindings.length },
        children: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } }],
      }
    })
    const out = await callCompositeHook(tenantSync, { parent, scope: 'Cluster' })
    assert.deepEqual(out.status, { seen: 0 })
  })
})
