import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../core/kube-object.js'
import { ControllerSpecError } from './controller-spec-error.js'
import {
  AGGREGATE_TO_CONTROLLERS_LABEL,
  controllerClusterRole,
  controllerRbacRules,
  rbacControllerOf,
} from './controller-rbac-rules.js'
import type { PolicyRule, RbacOptions } from './controller-rbac-rules.js'

type Json = Record<string, unknown>

const SYNC = { sync: { webhook: { url: 'http://hook.example/sync' } } }

function composite(spec: Json): KubeObject {
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name: 'web' },
    spec: {
      parentResource: { apiVersion: 'example.com/v1', resource: 'webs' },
      childResources: [{ apiVersion: 'v1', resource: 'pods' }],
      hooks: SYNC,
      ...spec,
    },
  }
}

function decorator(spec: Json): KubeObject {
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'DecoratorController',
    metadata: { name: 'deco' },
    spec: { resources: [{ apiVersion: 'apps/v1', resource: 'deployments' }], hooks: SYNC, ...spec },
  }
}

function rulesOf(object: KubeObject, options?: RbacOptions): PolicyRule[] {
  const controller = rbacControllerOf(object)
  assert.ok(controller !== undefined)
  return controllerRbacRules(controller, options)
}

/** The verbs granted on `group`/`resource`, or undefined when no rule names it. */
function verbsOn(
  rules: readonly PolicyRule[],
  group: string,
  resource: string
): string[] | undefined {
  const rule = rules.find((r) => r.apiGroups.includes(group) && r.resources.includes(resource))
  return rule === undefined ? undefined : [...rule.verbs]
}

const PARENT = ['get', 'list', 'watch', 'update', 'patch']
const CHILD = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']

describe('controllerRbacRules: CompositeController', () => {
  it('grants the parent, its status and each child exactly the verbs the engine sends', () => {
    assert.deepEqual(rulesOf(composite({})), [
      { apiGroups: ['example.com'], resources: ['webs'], verbs: PARENT },
      { apiGroups: ['example.com'], resources: ['webs/status'], verbs: ['update'] },
      { apiGroups: [''], resources: ['pods'], verbs: CHILD },
    ])
  })

  it('joins children of one group into one rule, and keeps groups apart', () => {
    const rules = rulesOf(
      composite({
        childResources: [
          { apiVersion: 'v1', resource: 'pods' },
          { apiVersion: 'v1', resource: 'services' },
          { apiVersion: 'networking.k8s.io/v1', resource: 'ingresses' },
        ],
      })
    )
    assert.deepEqual(rules.slice(2), [
      { apiGroups: [''], resources: ['pods', 'services'], verbs: CHILD },
      { apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: CHILD },
    ])
  })

  it('gives a resource that is both parent and child the union of both roles', () => {
    const rules = rulesOf(
      composite({ childResources: [{ apiVersion: 'example.com/v1', resource: 'webs' }] })
    )
    assert.deepEqual(verbsOn(rules, 'example.com', 'webs'), CHILD)
    assert.equal(rules.filter((r) => r.resources.includes('webs')).length, 1)
  })

  it('adds ControllerRevisions only when a child rule rolls', () => {
    const inPlace = rulesOf(composite({}))
    assert.equal(verbsOn(inPlace, 'metacontroller.k8s.io', 'controllerrevisions'), undefined)
    const rolling = rulesOf(
      composite({
        childResources: [
          { apiVersion: 'v1', resource: 'pods', updateStrategy: { method: 'RollingRecreate' } },
        ],
      })
    )
    assert.deepEqual(verbsOn(rolling, 'metacontroller.k8s.io', 'controllerrevisions'), [
      'list',
      'watch',
      'create',
      'update',
      'delete',
    ])
  })

  it('caches the related resources and Namespaces a customize hook names, only with one', () => {
    const options = {
      related: [
        { apiVersion: 'v1', resource: 'configmaps' },
        { apiVersion: 'v1', resource: 'namespaces' },
      ],
    }
    const without = rulesOf(composite({}), options)
    assert.equal(verbsOn(without, '', 'configmaps'), undefined)
    assert.equal(verbsOn(without, '', 'namespaces'), undefined)
    const hooks = { ...SYNC, customize: { webhook: { url: 'http://hook.example/customize' } } }
    const rules = rulesOf(composite({ hooks }), options)
    assert.deepEqual(verbsOn(rules, '', 'configmaps'), ['list', 'watch'])
    assert.deepEqual(verbsOn(rules, '', 'namespaces'), ['list', 'watch'])
  })

  it('reads Secrets and ConfigMaps only when webhook TLS or auth settings name them', () => {
    const secretRef = { namespace: 'hooks', name: 'token', key: 'token' }
    const hooks = {
      sync: {
        webhook: {
          url: 'https://hook.example/sync',
          authorization: { type: 'Bearer', secretRef },
          caBundle: { configMapRef: { namespace: 'hooks', name: 'ca', key: 'ca.crt' } },
        },
      },
    }
    const rules = rulesOf(composite({ hooks }))
    assert.deepEqual(verbsOn(rules, '', 'secrets'), ['list', 'watch'])
    assert.deepEqual(verbsOn(rules, '', 'configmaps'), ['list', 'watch'])
    assert.equal(verbsOn(rulesOf(composite({})), '', 'secrets'), undefined)
  })
})

describe('controllerRbacRules: DecoratorController', () => {
  it('treats every target as a parent and every attachment as a child', () => {
    const rules = rulesOf(
      decorator({
        resources: [
          { apiVersion: 'apps/v1', resource: 'deployments' },
          { apiVersion: 'apps/v1', resource: 'statefulsets' },
        ],
        attachments: [{ apiVersion: 'v1', resource: 'services' }],
      })
    )
    assert.deepEqual(rules, [
      { apiGroups: ['apps'], resources: ['deployments', 'statefulsets'], verbs: PARENT },
      {
        apiGroups: ['apps'],
        resources: ['deployments/status', 'statefulsets/status'],
        verbs: ['update'],
      },
      { apiGroups: [''], resources: ['services'], verbs: CHILD },
    ])
  })

  it('needs no ControllerRevisions even when an attachment names a rolling method', () => {
    const attachments = [
      { apiVersion: 'v1', resource: 'pods', updateStrategy: { method: 'RollingInPlace' } },
    ]
    const rules = rulesOf(decorator({ attachments }))
    assert.equal(verbsOn(rules, 'metacontroller.k8s.io', 'controllerrevisions'), undefined)
  })
})

describe('rbacControllerOf', () => {
  it('ignores objects that are not Metacontroller controllers', () => {
    const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }
    assert.equal(rbacControllerOf({ ...crd, metadata: { name: 'x' } }), undefined)
    const other = { apiVersion: 'example.com/v1', kind: 'CompositeController', metadata: {} }
    assert.equal(rbacControllerOf(other), undefined)
  })

  it('refuses a spec the engine would refuse, naming the field', () => {
    const bad = composite({ parentResource: { apiVersion: 'not a version', resource: 'webs' } })
    assert.throws(
      () => rbacControllerOf(bad),
      (e: unknown) =>
        e instanceof ControllerSpecError && e.field === 'spec.parentResource.apiVersion'
    )
  })
})

describe('controllerClusterRole', () => {
  const rules = rulesOf(composite({}))

  it('names the role after the controller and labels it for aggregation', () => {
    const role = controllerClusterRole('web', rules)
    assert.equal(role.metadata.name, 'metacontroller-ts:web')
    assert.deepEqual(role.metadata.labels, { [AGGREGATE_TO_CONTROLLERS_LABEL]: 'true' })
    assert.deepEqual(role['rules'], rules)
  })

  it('takes other aggregation labels in place of the default (a Helm release)', () => {
    const role = controllerClusterRole('web', rules, { 'example.com/aggregate': 'yes' })
    assert.deepEqual(role.metadata.labels, { 'example.com/aggregate': 'yes' })
  })
})
