import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import {
  DEFAULT_ENGINE_SERVICE_ACCOUNT,
  deployGrantedRules,
  engineServiceAccountOf,
} from './deploy-grants.js'

const RBAC = 'rbac.authorization.k8s.io/v1'
const ENGINE = { namespace: 'ops', name: 'engine' }
const rule = (resource: string) => ({ apiGroups: [''], resources: [resource], verbs: ['get'] })

function clusterRole(
  name: string,
  resource: string,
  labels?: Record<string, string>,
  aggregateLabels?: Record<string, string>
): KubeObject {
  return {
    apiVersion: RBAC,
    kind: 'ClusterRole',
    metadata: { name, ...(labels === undefined ? {} : { labels }) },
    rules: [rule(resource)],
    ...(aggregateLabels === undefined
      ? {}
      : { aggregationRule: { clusterRoleSelectors: [{ matchLabels: aggregateLabels }] } }),
  }
}

function binding(
  role: string,
  subject: Record<string, string>,
  kind: 'ClusterRoleBinding' | 'RoleBinding' = 'ClusterRoleBinding'
): KubeObject {
  return {
    apiVersion: RBAC,
    kind,
    metadata: { name: `bind-${role}`, ...(kind === 'RoleBinding' ? { namespace: 'ops' } : {}) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [subject],
  }
}

const account = (a = ENGINE) => ({ kind: 'ServiceAccount', ...a })
const resourcesOf = (objects: KubeObject[], a = ENGINE): string[] =>
  deployGrantedRules(objects, a).flatMap((r) => [...(r.resources ?? [])])

describe('engineServiceAccountOf', () => {
  it("is deploy/manifests' ServiceAccount when deploy/ binds none", () => {
    assert.deepEqual(
      engineServiceAccountOf([clusterRole('a', 'pods')]),
      DEFAULT_ENGINE_SERVICE_ACCOUNT
    )
  })

  it('prefers the subject bound to an aggregating ClusterRole over other bindings', () => {
    const objects = [
      binding('hook-reader', account({ namespace: 'ops', name: 'hook' })),
      clusterRole('engine:controllers', 'none', undefined, { 'example.com/engine': 'true' }),
      binding('engine:controllers', account()),
    ]
    assert.deepEqual(engineServiceAccountOf(objects), ENGINE)
    assert.deepEqual(engineServiceAccountOf(objects.slice(0, 1)), {
      namespace: 'ops',
      name: 'hook',
    })
  })
})

describe("deployGrantedRules: what deploy/'s RBAC gives the engine", () => {
  it("grants a ClusterRole carrying the engine's aggregation label, and no unlabelled one", () => {
    const objects = [
      clusterRole('labelled', 'configmaps', {
        'metacontroller-ts.dev/aggregate-to-controllers': 'true',
      }),
      clusterRole('other', 'secrets', {
        'metacontroller-ts.dev/aggregate-to-controllers': 'false',
      }),
    ]
    assert.deepEqual(resourcesOf(objects), ['configmaps'])
  })

  it('grants a ClusterRole a ClusterRoleBinding binds to the ServiceAccount or a group of it', () => {
    assert.deepEqual(resourcesOf([clusterRole('r', 'pods'), binding('r', account())]), ['pods'])
    for (const group of ['system:serviceaccounts', 'system:serviceaccounts:ops']) {
      const objects = [clusterRole('r', 'pods'), binding('r', { kind: 'Group', name: group })]
      assert.deepEqual(resourcesOf(objects), ['pods'], group)
    }
  })

  it('grants nothing bound to another ServiceAccount, nor through a RoleBinding', () => {
    const other = account({ namespace: 'elsewhere', name: 'engine' })
    assert.deepEqual(resourcesOf([clusterRole('r', 'pods'), binding('r', other)]), [])
    assert.deepEqual(
      resourcesOf([clusterRole('r', 'pods'), binding('r', account(), 'RoleBinding')]),
      []
    )
    assert.deepEqual(
      resourcesOf([
        clusterRole('r', 'pods'),
        binding('r', { kind: 'Group', name: 'system:serviceaccounts:x' }),
      ]),
      []
    )
  })

  it("follows the aggregation labels of an aggregating ClusterRole it holds (a release's own)", () => {
    const objects = [
      clusterRole('release:controllers', 'events', undefined, { 'example.com/to-release': 'true' }),
      binding('release:controllers', account()),
      clusterRole('mine', 'widgets', { 'example.com/to-release': 'true' }),
      clusterRole(
        'nested',
        'gadgets',
        { 'metacontroller-ts.dev/aggregate-to-controllers': 'true' },
        {
          'example.com/nested': 'true',
        }
      ),
      clusterRole('deep', 'gizmos', { 'example.com/nested': 'true' }),
      clusterRole('stray', 'secrets', { 'example.com/to-other': 'true' }),
    ]
    assert.deepEqual(resourcesOf(objects).sort(), ['events', 'gadgets', 'gizmos', 'widgets'])
  })
})
