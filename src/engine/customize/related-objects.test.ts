// Mirrors upstream's customize/manager_test.go: the selection-type table, the v1 restrictions,
// and the matching rules (incl. v2 cross-namespace), over plain object stores.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import type { HookVersion, RelatedResourceRule } from '../../api/hook-model.js'
import { ObjectStore } from '../../runtime/informers/object-store.js'
import {
  RelatedRuleError,
  matchesRelatedSelection,
  relatedObjectsByType,
  relatedSelection,
  relatedSelectionType,
  selectRelatedObjects,
  selectsWholeNamespaces,
} from './related-objects.js'
import type { RelatedResource, RelatedSelection } from './related-objects.js'

const SECRETS: RelatedResource = { apiVersion: 'v1', kind: 'Secret', namespaced: true }
const CLUSTER_ROLES: RelatedResource = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  namespaced: false,
}

function rule(fields: Partial<RelatedResourceRule> = {}): RelatedResourceRule {
  return { apiVersion: 'v1', resource: 'secrets', ...fields }
}

function parent(namespace?: string): KubeObject {
  return {
    apiVersion: 'test/v1',
    kind: 'Parent',
    metadata: { name: 'p', uid: 'u', ...(namespace === undefined ? {} : { namespace }) },
  }
}

function object(
  name: string,
  namespace?: string,
  labels?: Record<string, string>,
  kind = 'Secret'
): KubeObject {
  return {
    apiVersion: 'v1',
    kind,
    metadata: {
      name,
      resourceVersion: '1',
      ...(namespace === undefined ? {} : { namespace }),
      ...(labels === undefined ? {} : { labels }),
    },
  }
}

function store(...objects: KubeObject[]): ObjectStore {
  const result = new ObjectStore()
  for (const o of objects) result.upsert(o)
  return result
}

interface Case {
  readonly version: HookVersion
  /** The parent's namespace; undefined means a cluster-scoped parent. */
  readonly parentNamespace?: string
  readonly resource?: RelatedResource
}

function select(r: RelatedResourceRule, c: Case): RelatedSelection {
  return relatedSelection(r, {
    parent: parent(c.parentNamespace),
    parentNamespaced: c.parentNamespace !== undefined,
    customizeVersion: c.version,
    resource: c.resource ?? SECRETS,
  })
}

const selector = { matchLabels: { aaa: 'bbb' } }

describe('relatedSelectionType', () => {
  const table: [string, RelatedResourceRule, string][] = [
    [
      'labelSelector and namespace',
      rule({ labelSelector: selector, namespace: 'ns' }),
      'NamespaceAndLabels',
    ],
    [
      'namespaceSelector',
      rule({ namespaceSelector: { matchLabels: { env: 'prod' } } }),
      'NamespaceSelector',
    ],
    [
      'namespaceSelector and labelSelector',
      rule({ namespaceSelector: {}, labelSelector: selector }),
      'NamespaceSelector',
    ],
    ['labelSelector only', rule({ labelSelector: selector }), 'Labels'],
    ['namespace only', rule({ namespace: 'some' }), 'NamespaceAndNames'],
    ['names only', rule({ names: ['name'] }), 'NamespaceAndNames'],
    ['nothing', rule(), 'Labels'],
    ['null selectors', rule({ labelSelector: null, namespaceSelector: null }), 'Labels'],
    ['an empty names list', rule({ names: [] }), 'Labels'],
  ]
  for (const [name, r, expected] of table) {
    it(`returns ${expected} for ${name}`, () => {
      assert.equal(relatedSelectionType(r), expected)
    })
  }

  const invalid: [string, RelatedResourceRule, RegExp][] = [
    [
      'namespaceSelector and namespace',
      rule({ namespaceSelector: {}, namespace: 'ns' }),
      /namespace and namespaceSelector/,
    ],
    [
      'namespaceSelector and names',
      rule({ namespaceSelector: {}, names: ['n'] }),
      /names and labelSelector\/namespaceSelector/,
    ],
    [
      'labelSelector and names',
      rule({ labelSelector: selector, names: ['n'] }),
      /names and labelSelector/,
    ],
    // A present but empty selector still counts as a selector, as a non-nil Go pointer does.
    ['an empty labelSelector and names', rule({ labelSelector: {}, names: ['n'] }), /names/],
  ]
  for (const [name, r, message] of invalid) {
    it(`refuses ${name}`, () => {
      assert.throws(
        () => relatedSelectionType(r),
        (e) => e instanceof RelatedRuleError && message.test(e.message)
      )
    })
  }
})

describe('relatedSelection', () => {
  it('keeps a v1 Labels rule of a namespaced parent to its namespace', () => {
    const s = select(rule({ labelSelector: selector }), { version: 'v1', parentNamespace: 'some' })
    assert.equal(s.namespace, 'some')
  })

  it('lets a v2 Labels rule of a namespaced parent look everywhere', () => {
    const s = select(rule({ labelSelector: selector }), { version: 'v2', parentNamespace: 'some' })
    assert.equal(s.namespace, undefined)
  })

  it('looks everywhere for a cluster-scoped parent, even from v1', () => {
    assert.equal(select(rule(), { version: 'v1' }).namespace, undefined)
  })

  it('looks everywhere for a cluster-scoped resource of a v1 namespaced parent', () => {
    const s = select(rule(), { version: 'v1', parentNamespace: 'some', resource: CLUSTER_ROLES })
    assert.equal(s.namespace, undefined)
  })

  it('refuses a v1 rule naming another namespace than a namespaced parent', () => {
    for (const r of [
      rule({ namespace: 'other' }),
      rule({ namespace: 'other', labelSelector: selector }),
    ]) {
      assert.throws(
        () => select(r, { version: 'v1', parentNamespace: 'some' }),
        /requested related object namespace other differs from parent object namespace some/
      )
    }
  })

  it('accepts other namespaces from v2, and from v1 with a cluster-scoped parent', () => {
    assert.equal(
      select(rule({ namespace: 'other' }), { version: 'v2', parentNamespace: 'some' }).namespace,
      'other'
    )
    assert.equal(select(rule({ namespace: 'other' }), { version: 'v1' }).namespace, 'other')
  })

  it('ignores the namespace of a cluster-scoped resource', () => {
    const s = select(
      rule({ namespace: 'some-namespace', labelSelector: { matchLabels: { app: 'test' } } }),
      {
        version: 'v2',
        parentNamespace: 'test-ns',
        resource: CLUSTER_ROLES,
      }
    )
    assert.equal(s.namespace, undefined)
    assert.deepEqual(
      selectRelatedObjects(
        s,
        store(object('test-clusterrole', undefined, { app: 'test' }, 'ClusterRole'))
      ).map((o) => o.metadata.name),
      ['test-clusterrole']
    )
  })

  it('refuses a namespaceSelector on a cluster-scoped resource', () => {
    assert.throws(
      () =>
        select(rule({ namespaceSelector: selector }), {
          version: 'v2',
          parentNamespace: 'ns',
          resource: CLUSTER_ROLES,
        }),
      { message: 'namespaceSelector is only supported for namespaced related resources' }
    )
  })

  it('refuses a namespaceSelector from a v1 hook of a namespaced parent, not of a cluster-scoped one', () => {
    assert.throws(
      () => select(rule({ namespaceSelector: selector }), { version: 'v1', parentNamespace: 'ns' }),
      RelatedRuleError
    )
    assert.ok(select(rule({ namespaceSelector: selector }), { version: 'v1' }).namespaceMatcher)
  })

  it('reports an invalid selector of an in-process answer as a rule error', () => {
    assert.throws(
      () =>
        select(rule({ labelSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } }), {
          version: 'v2',
        }),
      (e) => e instanceof RelatedRuleError && e.message.includes('labelSelector')
    )
  })

  it('takes the kind from the resource and the apiVersion from the rule', () => {
    const s = select(rule(), { version: 'v2' })
    assert.equal(s.kind, 'Secret')
    assert.equal(s.apiVersion, 'v1')
  })
})

describe('selectRelatedObjects', () => {
  const secrets = store(
    object('a', 'some', { aaa: 'bbb' }),
    object('b', 'some', { aaa: 'ccc' }),
    object('a', 'other', { aaa: 'bbb' }),
    object('name', 'other')
  )
  const names = (objects: KubeObject[]): string[] =>
    objects.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`).sort()

  it('lists by labels in the parent namespace for v1, everywhere for v2', () => {
    const r = rule({ labelSelector: selector })
    assert.deepEqual(
      names(selectRelatedObjects(select(r, { version: 'v1', parentNamespace: 'some' }), secrets)),
      ['some/a']
    )
    assert.deepEqual(
      names(selectRelatedObjects(select(r, { version: 'v2', parentNamespace: 'some' }), secrets)),
      ['other/a', 'some/a']
    )
  })

  it('lists everything for a rule with no selector', () => {
    assert.equal(selectRelatedObjects(select(rule(), { version: 'v2' }), secrets).length, 4)
  })

  it('lists by namespace and labels', () => {
    const r = rule({ labelSelector: selector, namespace: 'other' })
    assert.deepEqual(
      names(selectRelatedObjects(select(r, { version: 'v2', parentNamespace: 'some' }), secrets)),
      ['other/a']
    )
  })

  it('lists by names, in one namespace or in all', () => {
    assert.deepEqual(
      names(selectRelatedObjects(select(rule({ names: ['a'] }), { version: 'v2' }), secrets)),
      ['other/a', 'some/a']
    )
    assert.deepEqual(
      names(
        selectRelatedObjects(
          select(rule({ names: ['a', 'name'], namespace: 'other' }), { version: 'v2' }),
          secrets
        )
      ),
      ['other/a', 'other/name']
    )
    assert.deepEqual(
      names(selectRelatedObjects(select(rule({ namespace: 'some' }), { version: 'v2' }), secrets)),
      ['some/a', 'some/b']
    )
  })

  it('lists by namespace selector, filtered by labels', () => {
    const namespaces = store(
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'some', labels: { env: 'prod' } } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } }
    )
    const all = select(rule({ namespaceSelector: { matchLabels: { env: 'prod' } } }), {
      version: 'v2',
    })
    assert.deepEqual(names(selectRelatedObjects(all, secrets, namespaces)), ['some/a', 'some/b'])
    const labelled = select(
      rule({ namespaceSelector: { matchLabels: { env: 'prod' } }, labelSelector: selector }),
      {
        version: 'v2',
      }
    )
    assert.deepEqual(names(selectRelatedObjects(labelled, secrets, namespaces)), ['some/a'])
    assert.deepEqual(selectRelatedObjects(all, secrets), [], 'no namespace cache selects nothing')
  })
})

describe('selectRelatedObjects complexity', () => {
  // Complexity checks, not timings: the objects a sync visits must not grow with the objects of
  // the namespace its rules cannot select. The store counts what its reads visit.
  const namespaces = store(
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', labels: { env: 'prod' } } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'else' } }
  )
  /** Three related secrets, two elsewhere, and `unrelated` others in the same namespace. */
  const secretsWith = (unrelated: number): ObjectStore => {
    const result = store(
      object('db', 'ns', { aaa: 'bbb', role: 'db' }),
      object('cache', 'ns', { aaa: 'bbb', role: 'cache' }),
      object('tls', 'ns', { aaa: 'bbb' }),
      object('db', 'else', { aaa: 'bbb', role: 'db' }),
      object('tls', 'else')
    )
    for (let i = 0; i < unrelated; i += 1) {
      result.upsert(object(`unrelated-${i}`, 'ns', { aaa: `other-${i % 10}`, role: 'db' }))
    }
    return result
  }
  const rules: Record<string, RelatedResourceRule> = {
    'labels in a namespace': rule({ labelSelector: selector, namespace: 'ns' }),
    'labels everywhere': rule({
      labelSelector: {
        matchLabels: { aaa: 'bbb' },
        matchExpressions: [{ key: 'role', operator: 'Exists' }],
      },
    }),
    'an In expression': rule({
      labelSelector: { matchExpressions: [{ key: 'aaa', operator: 'In', values: ['bbb', 'x'] }] },
    }),
    'names in a namespace': rule({ names: ['db', 'tls'], namespace: 'ns' }),
    'names everywhere': rule({ names: ['db', 'tls'] }),
    'a namespace selector and labels': rule({
      namespaceSelector: { matchLabels: { env: 'prod' } },
      labelSelector: selector,
    }),
  }
  for (const [name, r] of Object.entries(rules)) {
    it(`visits as many objects with 100× more unrelated ones in the namespace: ${name}`, () => {
      const visitsWith = (unrelated: number): { found: number; visits: number } => {
        const secrets = secretsWith(unrelated)
        const selection = select(r, { version: 'v2', parentNamespace: 'ns' })
        // The first sync of a rule may index its label keys: one pass, once per cache.
        selectRelatedObjects(selection, secrets, namespaces)
        const before = secrets.visits
        const found = selectRelatedObjects(selection, secrets, namespaces).length
        return { found, visits: secrets.visits - before }
      }
      const small = visitsWith(100)
      const large = visitsWith(10_000)
      assert.ok(small.found > 0)
      assert.deepEqual(large, small)
      assert.ok(small.visits <= 5, `visits ${String(small.visits)} of the 5 related secrets`)
    })
  }
})

describe('matchesRelatedSelection', () => {
  const table: { name: string; r: RelatedResourceRule; c: Case; o: KubeObject; want: boolean }[] = [
    {
      name: 'labels match',
      r: rule({ labelSelector: selector }),
      c: { version: 'v1' },
      o: object('x', undefined, { aaa: 'bbb' }),
      want: true,
    },
    {
      name: 'labels do not match',
      r: rule({ labelSelector: selector }),
      c: { version: 'v1' },
      o: object('x', undefined, { aaa: 'cbb' }),
      want: false,
    },
    {
      name: 'no labels',
      r: rule({ labelSelector: selector }),
      c: { version: 'v1' },
      o: object('x'),
      want: false,
    },
    {
      name: 'labels and namespace match',
      r: rule({ labelSelector: selector, namespace: 'some-ns' }),
      c: { version: 'v2' },
      o: object('x', 'some-ns', { aaa: 'bbb' }),
      want: true,
    },
    {
      name: 'labels match but the namespace does not',
      r: rule({ labelSelector: selector, namespace: 'some-ns' }),
      c: { version: 'v2' },
      o: object('x', 'other-ns', { aaa: 'bbb' }),
      want: false,
    },
    {
      name: 'namespaced parent: name and namespace match',
      r: rule({ namespace: 'some', names: ['name'] }),
      c: { version: 'v1', parentNamespace: 'some' },
      o: object('name', 'some'),
      want: true,
    },
    {
      name: 'namespaced parent: the namespace does not match',
      r: rule({ namespace: 'some', names: ['name'] }),
      c: { version: 'v1', parentNamespace: 'some' },
      o: object('name', 'other'),
      want: false,
    },
    {
      name: 'namespaced parent: the name does not match',
      r: rule({ namespace: 'some', names: ['name'] }),
      c: { version: 'v1', parentNamespace: 'some' },
      o: object('othername', 'some'),
      want: false,
    },
    {
      name: 'cluster parent: name and namespace match',
      r: rule({ namespace: 'some', names: ['name'] }),
      c: { version: 'v1' },
      o: object('name', 'some'),
      want: true,
    },
    {
      name: 'cluster parent: the namespace does not match',
      r: rule({ namespace: 'some', names: ['name'] }),
      c: { version: 'v1' },
      o: object('name', 'other'),
      want: false,
    },
    {
      name: 'v1 namespaced parent: Labels in another namespace',
      r: rule(),
      c: { version: 'v1', parentNamespace: 'some' },
      o: object('x', 'other'),
      want: false,
    },
    {
      name: 'v2: a cluster-scoped related object of a namespaced parent',
      r: { apiVersion: 'v1', resource: 'namespaces', names: ['some-namespace'] },
      c: {
        version: 'v2',
        parentNamespace: 'some',
        resource: { apiVersion: 'v1', kind: 'Namespace', namespaced: false },
      },
      o: object('some-namespace', undefined, undefined, 'Namespace'),
      want: true,
    },
    {
      name: 'v2: a related object in another namespace',
      r: rule({ namespace: 'other-namespace', names: ['some-secret'] }),
      c: { version: 'v2', parentNamespace: 'some' },
      o: object('some-secret', 'other-namespace'),
      want: true,
    },
    {
      name: 'v2: another namespace than the rule asks for',
      r: rule({ namespace: 'yet-another-namespace', names: ['some-secret'] }),
      c: { version: 'v2', parentNamespace: 'some' },
      o: object('some-secret', 'other-namespace'),
      want: false,
    },
  ]
  for (const { name, r, c, o, want } of table) {
    it(`${want ? 'matches' : 'does not match'} when ${name}`, () => {
      assert.equal(matchesRelatedSelection(select(r, c), o), want)
    })
  }

  it('matches a namespace selector through the Namespace cache', () => {
    const s = select(rule({ namespaceSelector: { matchLabels: { env: 'prod' } } }), {
      version: 'v2',
    })
    const namespaces = store({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'prod', labels: { env: 'prod' } },
    })
    assert.equal(matchesRelatedSelection(s, object('x', 'prod'), namespaces), true)
    assert.equal(
      matchesRelatedSelection(s, object('x', 'dev'), namespaces),
      false,
      'unknown namespace'
    )
    assert.equal(matchesRelatedSelection(s, object('x', 'prod')), false, 'no namespace cache')
  })
})

describe('relatedObjectsByType', () => {
  it('keys objects uniformly under Kind.apiVersion, one entry per rule even when empty', () => {
    const related = relatedObjectsByType([
      {
        selection: select(rule({ names: ['a'] }), { version: 'v2' }),
        store: store(object('a', 'ns')),
      },
      {
        selection: select(
          { apiVersion: 'v1', resource: 'configmaps', names: ['none'] },
          {
            version: 'v2',
            resource: { apiVersion: 'v1', kind: 'ConfigMap', namespaced: true },
          }
        ),
        store: store(),
      },
    ])
    assert.deepEqual([...related.keys()], ['Secret.v1', 'ConfigMap.v1'])
    assert.deepEqual([...(related.get('Secret.v1')?.keys() ?? [])], ['ns/a'])
    assert.equal(related.get('ConfigMap.v1')?.size, 0)
  })

  it('merges two rules of one type', () => {
    const secrets = store(object('a', 'ns'), object('b', 'ns'))
    const related = relatedObjectsByType([
      { selection: select(rule({ names: ['a'] }), { version: 'v2' }), store: secrets },
      { selection: select(rule({ names: ['b'] }), { version: 'v2' }), store: secrets },
    ])
    assert.deepEqual([...(related.get('Secret.v1')?.keys() ?? [])].sort(), ['ns/a', 'ns/b'])
  })
})

describe('selectsWholeNamespaces', () => {
  it('is true for a namespaceSelector without a labelSelector', () => {
    assert.equal(selectsWholeNamespaces(rule({ namespaceSelector: {} })), true)
    assert.equal(
      selectsWholeNamespaces(rule({ namespaceSelector: {}, labelSelector: selector })),
      false
    )
    assert.equal(selectsWholeNamespaces(rule()), false)
  })
})
