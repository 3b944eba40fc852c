import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../core/kube-object.js'
import { compileLabelSelector } from '../core/label-selector.js'
import { InvalidDesiredChildError, prepareDesiredChildren } from './desired-children.js'
import type { DesiredChildrenContext } from './desired-children.js'

const POD = 'Pod.v1'
const CONFIG_MAP = 'ConfigMap.v1'
const CLUSTER_ROLE = 'ClusterRole.rbac.authorization.k8s.io/v1'

function parent(namespace?: string): KubeObject {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Web',
    metadata: { name: 'web', uid: 'uid-1', ...(namespace === undefined ? {} : { namespace }) },
  }
}

function context(overrides: Partial<DesiredChildrenContext> = {}): DesiredChildrenContext {
  return {
    parent: parent('ns'),
    declaredTypes: new Set([POD, CONFIG_MAP, CLUSTER_ROLE]),
    namespaced: new Map([
      [POD, true],
      [CONFIG_MAP, true],
      [CLUSTER_ROLE, false],
    ]),
    injectLabels: {},
    matchesSelector: () => true,
    ...overrides,
  }
}

function pod(name: string, metadata: Partial<KubeObject['metadata']> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...metadata }, spec: { x: 1 } }
}

function clusterRole(name: string, metadata: Partial<KubeObject['metadata']> = {}): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, ...metadata },
  }
}

/** Asserts that preparing `children` fails with an InvalidDesiredChildError matching `message`. */
function assertRejects(
  children: KubeObject[],
  ctx: DesiredChildrenContext,
  message: RegExp
): InvalidDesiredChildError {
  let caught: unknown
  try {
    prepareDesiredChildren(children, ctx)
  } catch (error) {
    caught = error
  }
  assert.ok(caught instanceof InvalidDesiredChildError, `expected a rejection matching ${message}`)
  assert.match(caught.message, message)
  assert.equal(caught.name, 'InvalidDesiredChildError')
  return caught
}

describe('prepareDesiredChildren', () => {
  it('defaults a namespaced child of a namespaced parent to the parent namespace', () => {
    const out = prepareDesiredChildren([pod('a')], context())
    const child = out.get(POD)?.get('ns/a')
    assert.ok(child, 'keyed by the defaulted namespace')
    assert.equal(child.metadata.namespace, 'ns')
  })

  it('defaults an empty-string namespace to the parent namespace too', () => {
    const out = prepareDesiredChildren([pod('a', { namespace: '' })], context())
    assert.equal(out.get(POD)?.get('ns/a')?.metadata.namespace, 'ns')
  })

  it('accepts a namespaced child that names its parent namespace explicitly', () => {
    const out = prepareDesiredChildren([pod('a', { namespace: 'ns' })], context())
    assert.deepEqual([...(out.get(POD)?.keys() ?? [])], ['ns/a'])
  })

  it('keeps the namespace a child of a cluster-scoped parent names', () => {
    const ctx = context({ parent: parent() })
    const out = prepareDesiredChildren([pod('a', { namespace: 'team-1' })], ctx)
    assert.equal(out.get(POD)?.get('team-1/a')?.metadata.namespace, 'team-1')
  })

  it('gives a cluster-scoped child of a namespaced parent no namespace and keys it by name', () => {
    const out = prepareDesiredChildren([clusterRole('reader')], context())
    const role = out.get(CLUSTER_ROLE)?.get('reader')
    assert.ok(role)
    assert.equal(role.metadata.namespace, undefined)
  })

  it('adds injected labels that a child lacks but keeps a value the child sets itself', () => {
    const ctx = context({ injectLabels: { 'controller-uid': 'uid-1', app: 'web' } })
    const out = prepareDesiredChildren(
      [pod('a', { labels: { app: 'mine', tier: 'front' } }), pod('b')],
      ctx
    )
    assert.deepEqual(out.get(POD)?.get('ns/a')?.metadata.labels, {
      'controller-uid': 'uid-1',
      app: 'mine',
      tier: 'front',
    })
    assert.deepEqual(out.get(POD)?.get('ns/b')?.metadata.labels, {
      'controller-uid': 'uid-1',
      app: 'web',
    })
  })

  it('checks the selector against the labels after injection', () => {
    const seen: Record<string, string>[] = []
    const ctx = context({
      injectLabels: { 'controller-uid': 'uid-1' },
      matchesSelector: (labels) => {
        seen.push({ ...labels })
        return labels['controller-uid'] === 'uid-1'
      },
    })
    prepareDesiredChildren([pod('a')], ctx)
    assert.deepEqual(seen, [{ 'controller-uid': 'uid-1' }])
  })

  it('rejects a child of an undeclared type, naming its type and the declared ones', () => {
    const deployment: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
    }
    const error = assertRejects([deployment], context(), /Deployment\.apps\/v1/)
    assert.match(error.message, /not in childResources/)
    for (const declared of [POD, CONFIG_MAP, CLUSTER_ROLE]) {
      assert.ok(error.message.includes(declared), `names the declared type ${declared}`)
    }
  })

  it('rejects a declared kind under another apiVersion as undeclared', () => {
    const betaPod: KubeObject = { apiVersion: 'v1beta1', kind: 'Pod', metadata: { name: 'a' } }
    assertRejects([betaPod], context(), /Pod\.v1beta1.*not in childResources/)
  })

  it('says "none" when no child type is declared', () => {
    const ctx = context({ declaredTypes: new Set(), namespaced: new Map() })
    assertRejects([pod('a')], ctx, /declared: none/)
  })

  it('rejects a namespaced child in another namespace than its namespaced parent', () => {
    const error = assertRejects([pod('a', { namespace: 'other' })], context(), /namespace other/)
    assert.match(error.message, /parent is in ns/)
    assert.match(error.message, /Pod other\/a/)
  })

  it('rejects a child whose labels do not match the parent selector, in upstream wording', () => {
    const matcher = compileLabelSelector({ matchLabels: { app: 'web' } })
    const ctx = context({ matchesSelector: (labels) => matcher(labels) })
    const error = assertRejects(
      [pod('a', { labels: { app: 'db' } })],
      ctx,
      /don't match parent selector/
    )
    assert.match(error.message, /Pod ns\/a/)
    assert.ok(error.message.includes('{"app":"db"}'), 'shows the labels it checked')
  })

  it('rejects labels that are not a map of strings', () => {
    const bad = pod('a')
    ;(bad.metadata as Record<string, unknown>)['labels'] = { count: 3 }
    assertRejects([bad], context(), /must be a map of strings/)
  })

  it('rejects a child without metadata.name, and one with an empty name', () => {
    const generated: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { generateName: 'web-' },
    }
    assertRejects(
      [pod('ok'), generated],
      context(),
      /desired child #1 \(Pod\) has no metadata\.name/
    )
    assertRejects([pod('')], context(), /has no metadata\.name/)
  })

  it('rejects a child that is not an object with metadata', () => {
    const noMetadata = { apiVersion: 'v1', kind: 'Pod' } as unknown as KubeObject
    assertRejects([noMetadata], context(), /desired child #0 is not an object with metadata/)
    assertRejects([null as unknown as KubeObject], context(), /#0 is not an object/)
  })

  it('rejects the same child twice, also when only one of them names the namespace', () => {
    assertRejects([pod('a'), pod('a')], context(), /desired child Pod ns\/a appears twice/)
    assertRejects([pod('a'), pod('a', { namespace: 'ns' })], context(), /appears twice/)
  })

  it('accepts the same name under two types, and in two namespaces of a cluster-scoped parent', () => {
    const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }
    const out = prepareDesiredChildren([pod('a'), cm], context())
    assert.equal(out.get(POD)?.size, 1)
    assert.equal(out.get(CONFIG_MAP)?.size, 1)
    const spread = prepareDesiredChildren(
      [pod('a', { namespace: 'x' }), pod('a', { namespace: 'y' })],
      context({ parent: parent() })
    )
    assert.deepEqual([...(spread.get(POD)?.keys() ?? [])], ['x/a', 'y/a'])
  })

  it('does not mutate the children, their labels or the injected labels', () => {
    const children = [pod('a', { labels: { tier: 'front' } }), pod('b')]
    const before = structuredClone(children)
    const injectLabels = { 'controller-uid': 'uid-1' }
    const out = prepareDesiredChildren(children, context({ injectLabels }))
    assert.deepEqual(children, before)
    assert.deepEqual(injectLabels, { 'controller-uid': 'uid-1' })
    const a = out.get(POD)?.get('ns/a')
    assert.ok(a)
    assert.notEqual(a, children[0], 'the result holds copies')
    a.metadata.labels = {}
    ;(a['spec'] as Record<string, unknown>)['x'] = 2
    assert.deepEqual(children, before, 'changing the result does not reach the input')
  })

  it('has an entry for every declared type, even when the hook returned none of it', () => {
    const empty = prepareDesiredChildren([], context())
    assert.deepEqual([...empty.keys()].sort(), [CLUSTER_ROLE, CONFIG_MAP, POD].sort())
    for (const bucket of empty.values()) assert.equal(bucket.size, 0)
    const some = prepareDesiredChildren([pod('a')], context())
    assert.equal(some.get(POD)?.size, 1)
    assert.equal(some.get(CONFIG_MAP)?.size, 0)
    assert.equal(some.get(CLUSTER_ROLE)?.size, 0)
  })

  it('keeps the hook order within a type and the child fields it does not touch', () => {
    const out = prepareDesiredChildren([pod('c'), pod('a'), pod('b')], context())
    assert.deepEqual([...(out.get(POD)?.keys() ?? [])], ['ns/c', 'ns/a', 'ns/b'])
    assert.deepEqual(out.get(POD)?.get('ns/a')?.['spec'], { x: 1 })
  })

  it('treats a type missing from the namespaced map as namespaced', () => {
    const ctx = context({ namespaced: new Map() })
    const out = prepareDesiredChildren([clusterRole('r')], ctx)
    assert.equal(out.get(CLUSTER_ROLE)?.get('ns/r')?.metadata.namespace, 'ns')
  })
})

describe('prepareDesiredChildren for a cluster-scoped parent', () => {
  const clusterParent: KubeObject = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'reader', uid: 'uid-reader' },
  }
  const rules = {
    parent: clusterParent,
    ruleField: 'attachments',
    declaredTypes: new Set(['RoleBinding.rbac.authorization.k8s.io/v1']),
    namespaced: new Map([['RoleBinding.rbac.authorization.k8s.io/v1', true]]),
    injectLabels: {},
    matchesSelector: () => true,
  }
  const binding = (namespace?: string): KubeObject => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'reader', ...(namespace === undefined ? {} : { namespace }) },
  })

  it('keeps the namespace a namespaced child names', () => {
    const out = prepareDesiredChildren([binding('default')], rules)
    assert.deepEqual(
      [...(out.get('RoleBinding.rbac.authorization.k8s.io/v1')?.keys() ?? [])],
      ['default/reader']
    )
  })

  it('refuses a namespaced child without a namespace, naming the rule list in messages', () => {
    assert.throws(
      () => prepareDesiredChildren([binding()], rules),
      /RoleBinding reader is namespaced but has no metadata.namespace/
    )
    assert.throws(
      () =>
        prepareDesiredChildren(
          [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' } }],
          rules
        ),
      /which is not in attachments/
    )
  })
})
