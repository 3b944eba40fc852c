import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { controllerRbacRules, rbacControllerOf } from '../../api/controller-rbac-rules.js'
import type { PolicyRule, RbacController } from '../../api/controller-rbac-rules.js'
import type { KubeObject } from '../../core/kube-object.js'
import { describeGap, gapsOf, missingRights, neededRights, ruleGrants } from './missing-rights.js'
import type { NeededRight } from './missing-rights.js'

const SYNC = { sync: { webhook: { url: 'http://hook.example/sync' } } }

function controllerOf(object: KubeObject): RbacController {
  const controller = rbacControllerOf(object)
  assert.ok(controller !== undefined)
  return controller
}

const COMPOSITE = controllerOf({
  apiVersion: 'metacontroller.k8s.io/v1alpha1',
  kind: 'CompositeController',
  metadata: { name: 'reloads' },
  spec: {
    parentResource: { apiVersion: 'dev.example.com/v1', resource: 'reloads' },
    childResources: [
      { apiVersion: 'v1', resource: 'configmaps' },
      {
        apiVersion: 'apps/v1',
        resource: 'deployments',
        updateStrategy: { method: 'RollingInPlace' },
      },
    ],
    hooks: SYNC,
  },
})
const DECORATOR = controllerOf({
  apiVersion: 'metacontroller.k8s.io/v1alpha1',
  kind: 'DecoratorController',
  metadata: { name: 'labeler' },
  spec: {
    resources: [{ apiVersion: 'v1', resource: 'namespaces' }],
    attachments: [{ apiVersion: 'networking.k8s.io/v1', resource: 'networkpolicies' }],
    hooks: SYNC,
  },
})

const right = (verb: string, group: string, resource: string, subresource?: string) =>
  ({
    controller: 'reloads',
    kind: 'CompositeController',
    verb,
    group,
    resource,
    ...(subresource === undefined ? {} : { subresource }),
  }) satisfies NeededRight

/** The rules with one verb taken out of the rule naming `resource`. */
function without(rules: readonly PolicyRule[], resource: string, verb: string): PolicyRule[] {
  return rules.map((rule) =>
    rule.resources.includes(resource)
      ? { ...rule, verbs: rule.verbs.filter((v) => v !== verb) }
      : rule
  )
}

describe('neededRights', () => {
  it('is one right per verb, group and resource of the rules metactl rbac computes', () => {
    for (const controller of [COMPOSITE, DECORATOR]) {
      const rules = controllerRbacRules(controller)
      const expected = rules.reduce(
        (n, r) => n + r.verbs.length * r.resources.length * r.apiGroups.length,
        0
      )
      const needed = neededRights(controller)
      assert.equal(needed.length, expected)
      assert.ok(needed.every((r) => r.controller === controller.name && r.kind === controller.kind))
    }
  })

  it('splits a status rule into its resource and subresource', () => {
    const status = neededRights(COMPOSITE).filter((r) => r.subresource !== undefined)
    assert.deepEqual(status, [right('update', 'dev.example.com', 'reloads', 'status')])
  })
})

describe('missingRights', () => {
  it('finds nothing missing under the very rules metactl rbac computes', () => {
    for (const controller of [COMPOSITE, DECORATOR]) {
      assert.deepEqual(missingRights(neededRights(controller), controllerRbacRules(controller)), [])
    }
  })

  it('finds exactly the right a verb taken out of those rules was', () => {
    const rules = controllerRbacRules(COMPOSITE)
    assert.deepEqual(
      missingRights(neededRights(COMPOSITE), without(rules, 'reloads/status', 'update')),
      [right('update', 'dev.example.com', 'reloads', 'status')]
    )
    assert.deepEqual(
      missingRights(neededRights(COMPOSITE), without(rules, 'configmaps', 'delete')),
      [right('delete', '', 'configmaps')]
    )
  })

  it('finds every right missing when nothing is granted', () => {
    const needed = neededRights(DECORATOR)
    assert.deepEqual(missingRights(needed, []), needed)
  })
})

describe('ruleGrants: the RBAC authorizer matching', () => {
  const status = right('update', 'dev.example.com', 'reloads', 'status')
  const create = right('create', '', 'configmaps')

  it('takes * for any verb, group and resource, subresources included', () => {
    assert.ok(ruleGrants({ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }, status))
    assert.ok(ruleGrants({ apiGroups: [''], resources: ['*'], verbs: ['create'] }, create))
  })

  it('takes */status for any resource status, but not for the resource itself', () => {
    const rule = { apiGroups: ['*'], resources: ['*/status'], verbs: ['update'] }
    assert.ok(ruleGrants(rule, status))
    assert.equal(ruleGrants(rule, right('update', 'dev.example.com', 'reloads')), false)
  })

  it('does not take a resource for its subresource, nor another group or verb', () => {
    assert.equal(
      ruleGrants(
        { apiGroups: ['dev.example.com'], resources: ['reloads'], verbs: ['update'] },
        status
      ),
      false
    )
    assert.equal(
      ruleGrants({ apiGroups: ['apps'], resources: ['configmaps'], verbs: ['*'] }, create),
      false
    )
    assert.equal(
      ruleGrants({ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }, create),
      false
    )
  })

  it('does not take a rule limited to resourceNames, nor one missing its fields', () => {
    const named = { apiGroups: [''], resources: ['configmaps'], verbs: ['*'], resourceNames: ['a'] }
    assert.equal(ruleGrants(named, create), false)
    assert.equal(ruleGrants({ verbs: ['*'] }, create), false)
  })
})

describe('gapsOf and describeGap', () => {
  it("join one controller's verbs on one resource into one line, in order", () => {
    const missing = missingRights(neededRights(COMPOSITE), [])
    const gaps = gapsOf(missing)
    assert.deepEqual(
      gaps.map((g) => describeGap(g)),
      [
        'get, list, watch, update, patch on reloads in API group dev.example.com',
        'update on reloads/status in API group dev.example.com',
        'get, list, watch, create, update, patch, delete on configmaps in the core API group',
        'get, list, watch, create, update, patch, delete on deployments in API group apps',
        'list, watch, create, update, delete on controllerrevisions in API group metacontroller.k8s.io',
      ]
    )
    assert.equal(
      gaps.reduce((n, g) => n + g.verbs.length, 0),
      missing.length
    )
  })

  it('keeps the gaps of two controllers on one resource apart', () => {
    const other = { ...right('get', '', 'configmaps'), controller: 'other' }
    const gaps = gapsOf([right('get', '', 'configmaps'), other, right('list', '', 'configmaps')])
    assert.deepEqual(
      gaps.map((g) => [g.controller, g.verbs]),
      [
        ['reloads', ['get', 'list']],
        ['other', ['get']],
      ]
    )
  })
})
