import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isClusterScoped, isResourceOf, kindOf, pluralOf } from './resource-names.js'

describe('offline resources', () => {
  it('pluralizes kinds as Kubernetes names their resources', () => {
    const cases: Record<string, string> = {
      Pod: 'pods',
      ConfigMap: 'configmaps',
      Ingress: 'ingresses',
      NetworkPolicy: 'networkpolicies',
      Endpoints: 'endpoints',
      Gateway: 'gateways',
      Box: 'boxes',
      Patch: 'patches',
      Mesh: 'meshes',
    }
    for (const [kind, resource] of Object.entries(cases)) {
      assert.equal(pluralOf(kind), resource, kind)
      assert.ok(isResourceOf(kind, resource), kind)
    }
    assert.equal(isResourceOf('Pod', 'pod'), false)
  })

  it('finds well-known kinds of a resource, and guesses others', () => {
    assert.deepEqual(kindOf('v1', 'configmaps'), { kind: 'ConfigMap', guessed: false })
    assert.deepEqual(kindOf('networking.k8s.io/v1', 'networkpolicies'), {
      kind: 'NetworkPolicy',
      guessed: false,
    })
    assert.deepEqual(kindOf('v1', 'endpoints'), { kind: 'Endpoints', guessed: false })
    assert.deepEqual(kindOf('example.com/v1', 'widgets'), { kind: 'Widget', guessed: true })
    assert.deepEqual(kindOf('example.com/v1', 'policies'), { kind: 'Policy', guessed: true })
    assert.deepEqual(kindOf('example.com/v1', 'classes'), { kind: 'Class', guessed: true })
    // A well-known resource name under another group is not that kind.
    assert.deepEqual(kindOf('example.com/v1', 'configmaps'), { kind: 'Configmap', guessed: true })
  })

  it('takes kinds as namespaced unless they are well-known cluster-scoped ones', () => {
    assert.equal(isClusterScoped('v1', 'Namespace'), true)
    assert.equal(isClusterScoped('rbac.authorization.k8s.io/v1', 'ClusterRole'), true)
    assert.equal(isClusterScoped('apiextensions.k8s.io/v1', 'CustomResourceDefinition'), true)
    assert.equal(isClusterScoped('rbac.authorization.k8s.io/v1', 'Role'), false)
    assert.equal(isClusterScoped('v1', 'Pod'), false)
    assert.equal(isClusterScoped('example.com/v1', 'Namespace'), false)
  })
})
