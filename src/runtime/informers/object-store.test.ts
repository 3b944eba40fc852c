import { objectKey } from '../../core/object-key.js'
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject, OwnerReference } from '../../core/kube-object.js'
import { LABEL_INDEX_MIN_VISITS, ObjectStore, controllerUid } from './object-store.js'

function owner(uid: string, controller?: boolean): OwnerReference {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    name: `rs-${uid}`,
    uid,
    ...(controller === undefined ? {} : { controller }),
  }
}

function object(
  name: string,
  namespace: string | undefined,
  ownerReferences?: OwnerReference[]
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      ...(ownerReferences === undefined ? {} : { ownerReferences }),
    },
  }
}

function keys(objects: readonly KubeObject[]): string[] {
  return objects.map((o) => objectKey(o)).sort()
}

describe('objectKey', () => {
  it('is namespace/name for namespaced objects and name for cluster-scoped ones', () => {
    assert.equal(objectKey(object('web', 'prod')), 'prod/web')
    assert.equal(objectKey(object('node-1', undefined)), 'node-1')
    assert.equal(objectKey(object('node-1', '')), 'node-1', 'an empty namespace is none')
  })
})

describe('controllerUid', () => {
  it('returns the UID of the controller reference and ignores the other owners', () => {
    assert.equal(controllerUid(object('a', 'ns', [owner('u1'), owner('u2', true)])), 'u2')
    assert.equal(controllerUid(object('a', 'ns', [owner('u1', false)])), undefined)
    assert.equal(controllerUid(object('a', 'ns')), undefined)
  })
})

describe('ObjectStore', () => {
  it('returns the replaced object from upsert and the removed one from remove', () => {
    const store = new ObjectStore()
    const first = object('a', 'ns')
    const second = object('a', 'ns')
    assert.equal(store.upsert(first), undefined)
    assert.equal(store.upsert(second), first)
    assert.equal(store.size, 1)
    assert.equal(store.get('ns/a'), second)
    assert.equal(store.remove('ns/a'), second)
    assert.equal(store.remove('ns/a'), undefined, 'removing a missing key does nothing')
    assert.equal(store.size, 0)
    assert.deepEqual(store.list(), [])
  })

  it('indexes by namespace, leaving cluster-scoped objects out of every namespace', () => {
    const store = new ObjectStore()
    store.upsert(object('a', 'one'))
    store.upsert(object('b', 'one'))
    store.upsert(object('c', 'two'))
    store.upsert(object('n1', undefined))
    store.upsert(object('n2', ''))
    assert.deepEqual(keys(store.listByNamespace('one')), ['one/a', 'one/b'])
    assert.deepEqual(keys(store.listByNamespace('two')), ['two/c'])
    assert.deepEqual(store.listByNamespace(''), [])
    assert.deepEqual(store.listByNamespace('missing'), [])
    assert.deepEqual(keys(store.list()), ['n1', 'n2', 'one/a', 'one/b', 'two/c'])
  })

  it('moves an object between controller indexes when its controller changes', () => {
    const store = new ObjectStore()
    store.upsert(object('a', 'ns', [owner('u1', true)]))
    store.upsert(object('b', 'ns', [owner('u1', true)]))
    assert.deepEqual(keys(store.listByControllerUid('u1')), ['ns/a', 'ns/b'])
    store.upsert(object('a', 'ns', [owner('u2', true)]))
    assert.deepEqual(keys(store.listByControllerUid('u1')), ['ns/b'])
    assert.deepEqual(keys(store.listByControllerUid('u2')), ['ns/a'])
    store.upsert(object('b', 'ns', [owner('u1', false)]))
    assert.deepEqual(store.listByControllerUid('u1'), [], 'an owner that is not controller')
    store.upsert(object('a', 'ns'))
    assert.deepEqual(store.listByControllerUid('u2'), [], 'owner references removed')
  })

  it('drops a removed object from both indexes', () => {
    const store = new ObjectStore()
    store.upsert(object('a', 'ns', [owner('u1', true)]))
    store.remove('ns/a')
    assert.deepEqual(store.listByNamespace('ns'), [])
    assert.deepEqual(store.listByControllerUid('u1'), [])
    store.upsert(object('a', 'ns', [owner('u1', true)]))
    assert.deepEqual(keys(store.listByControllerUid('u1')), ['ns/a'], 'and indexes it again')
  })

  it('unindexes an object under the owner it was indexed with, even if it was changed in place', () => {
    const store = new ObjectStore()
    const cached = object('a', 'ns', [owner('u1', true)])
    store.upsert(cached)
    // A caller breaking the read-only caveat must not leave a stale index entry behind.
    cached.metadata.ownerReferences = [owner('u9', true)]
    store.upsert(object('a', 'ns', [owner('u2', true)]))
    assert.deepEqual(store.listByControllerUid('u1'), [])
    assert.deepEqual(store.listByControllerUid('u9'), [])
    assert.deepEqual(keys(store.listByControllerUid('u2')), ['ns/a'])
    store.remove('ns/a')
    assert.deepEqual(store.listByControllerUid('u2'), [])
  })

  it('keeps orphans per namespace and follows an object as it is adopted and released', () => {
    const store = new ObjectStore()
    store.upsert(object('a', 'one'))
    store.upsert(object('b', 'one', [owner('u1', true)]))
    store.upsert(object('c', 'one', [owner('u2', false)]))
    store.upsert(object('d', 'two'))
    store.upsert(object('n', undefined))
    assert.deepEqual(keys(store.listOrphans('one')), ['one/a', 'one/c'], 'a non-controller owner')
    assert.deepEqual(keys(store.listOrphans('')), ['n'], 'cluster-scoped orphans')
    assert.deepEqual(keys(store.listOrphans()), ['n', 'one/a', 'one/c', 'two/d'])
    store.upsert(object('a', 'one', [owner('u1', true)]))
    assert.deepEqual(keys(store.listOrphans('one')), ['one/c'], 'adopted')
    store.upsert(object('b', 'one'))
    assert.deepEqual(keys(store.listOrphans('one')), ['one/b', 'one/c'], 'released')
    store.remove('one/b')
    store.remove('two/d')
    assert.deepEqual(keys(store.listOrphans('one')), ['one/c'])
    assert.deepEqual(store.listOrphans('two'), [])
  })

  it('counts a controller reference without a UID as a controller, not an orphan', () => {
    const store = new ObjectStore()
    const ref: OwnerReference = {
      apiVersion: 'v1',
      kind: 'X',
      name: 'x',
      uid: '',
      controller: true,
    }
    delete (ref as { uid?: string }).uid
    store.upsert(object('a', 'ns', [ref]))
    assert.deepEqual(store.listOrphans('ns'), [])
  })
})

function labelled(
  name: string,
  namespace: string | undefined,
  labels: Record<string, string>,
  controller?: string
): KubeObject {
  const base = object(
    name,
    namespace,
    controller === undefined ? undefined : [owner(controller, true)]
  )
  return { ...base, metadata: { ...base.metadata, labels } }
}

/** A store of `count` objects over three namespaces and the cluster scope, with varied labels. */
function mixedStore(count: number): ObjectStore {
  const store = new ObjectStore()
  const namespaces = [undefined, 'a', 'b', 'c']
  for (let i = 0; i < count; i += 1) {
    store.upsert(
      labelled(
        `o-${i % 7}-${i}`,
        namespaces[i % 4],
        { app: `app-${i % 5}`, ...(i % 3 === 0 ? { tier: 'web' } : {}) },
        i % 2 === 0 ? undefined : `owner-${i % 11}`
      )
    )
  }
  return store
}

describe('ObjectStore.listMatching', () => {
  const queries = [
    {},
    { namespace: 'a' },
    { namespace: '' },
    { orphansOnly: true },
    { namespace: 'b', orphansOnly: true },
    { labels: [{ key: 'app', values: ['app-1', 'app-3'] }] },
    {
      namespace: 'c',
      labels: [
        { key: 'tier', values: ['web'] },
        { key: 'app', values: ['app-2'] },
      ],
    },
    { orphansOnly: true, labels: [{ key: 'app', values: ['app-4'] }] },
    { names: new Set(['o-1-1', 'o-3-10', 'o-0-7', 'missing']) },
    { namespace: 'a', names: new Set(['o-1-1', 'o-3-10']) },
    { labels: [{ key: 'absent', values: ['x'] }] },
  ]
  const brute = (store: ObjectStore, query: (typeof queries)[number]): string[] =>
    keys(
      store.list().filter((o) => {
        const { metadata } = o
        if ('namespace' in query && (metadata.namespace ?? '') !== query.namespace) return false
        if ('orphansOnly' in query && controllerUid(o) !== undefined) return false
        if ('names' in query && !query.names.has(metadata.name ?? '')) return false
        return ('labels' in query ? query.labels : []).every((term) =>
          term.values.includes(metadata.labels?.[term.key] ?? '\u0000')
        )
      })
    )

  it('lists exactly the objects meeting every condition, before and after indexing labels', () => {
    for (const size of [20, 400]) {
      const store = mixedStore(size)
      for (const query of queries) {
        assert.deepEqual(
          keys(store.listMatching(query)),
          brute(store, query),
          JSON.stringify(query)
        )
      }
    }
  })

  it('indexes a label key only when a query names it and would otherwise visit many objects', () => {
    const small = mixedStore(LABEL_INDEX_MIN_VISITS - 1)
    small.listMatching({ labels: [{ key: 'app', values: ['app-1'] }] })
    assert.equal(small.indexedLabelKeys, 0, 'a scan of a few objects costs no index')
    const large = mixedStore(1_000)
    large.listMatching({ namespace: 'a' })
    assert.equal(large.indexedLabelKeys, 0, 'no query named a label')
    large.listMatching({ labels: [{ key: 'app', values: ['app-1'] }] })
    assert.equal(large.indexedLabelKeys, 1)
    const before = large.visits
    const found = large.listMatching({ labels: [{ key: 'app', values: ['app-1'] }] })
    assert.equal(found.length, 200)
    assert.equal(large.visits - before, 200, 'an indexed key visits only the objects carrying it')
  })

  it('keeps the label index in step with updates, removals and in-place changes', () => {
    const store = mixedStore(200)
    const query = { labels: [{ key: 'tier', values: ['db'] }] }
    assert.deepEqual(keys(store.listMatching(query)), [])
    store.upsert(labelled('x', 'a', { tier: 'db' }))
    store.upsert(labelled('y', undefined, { tier: 'db' }))
    assert.deepEqual(keys(store.listMatching(query)), ['a/x', 'y'])
    store.upsert(labelled('x', 'a', { tier: 'web' }))
    assert.deepEqual(keys(store.listMatching(query)), ['y'])
    const y = store.get('y')
    if (y?.metadata.labels !== undefined) y.metadata.labels['tier'] = 'changed-in-place'
    store.remove('y')
    assert.deepEqual(keys(store.listMatching(query)), [])
    assert.deepEqual(
      keys(store.listMatching({ labels: [{ key: 'tier', values: ['changed-in-place'] }] })),
      []
    )
  })

  it('finds named objects by key in every namespace and the cluster scope', () => {
    const store = mixedStore(2_000)
    const before = store.visits
    const found = store.listMatching({ names: new Set(['o-1-1', 'o-2-2', 'o-0-7']) })
    assert.deepEqual(keys(found), ['a/o-1-1', 'b/o-2-2', 'c/o-0-7'])
    assert.equal(store.visits - before, 3, 'three lookups found, twelve keys tried')
  })
})

describe('ObjectStore label keys', () => {
  it('indexes no further key when an indexed one already narrows the query', () => {
    const store = mixedStore(1_000)
    store.listMatching({ labels: [{ key: 'app', values: ['app-1'] }] })
    assert.equal(store.indexedLabelKeys, 1)
    // app-1 leaves 200 objects: still many, so tier is indexed too.
    store.listMatching({
      labels: [
        { key: 'app', values: ['app-1'] },
        { key: 'tier', values: ['web'] },
      ],
    })
    assert.equal(store.indexedLabelKeys, 2)
    const narrow = mixedStore(1_000)
    narrow.upsert(labelled('rare', 'a', { app: 'rare' }))
    narrow.listMatching({ labels: [{ key: 'app', values: ['rare'] }] })
    narrow.listMatching({
      labels: [
        { key: 'app', values: ['rare'] },
        { key: 'tier', values: ['web'] },
      ],
    })
    assert.equal(narrow.indexedLabelKeys, 1, 'app=rare visits one object: tier is not indexed')
  })
})
