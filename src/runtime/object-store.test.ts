import { objectKey } from '../core/object-key.js'
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject, OwnerReference } from '../core/kube-object.js'
import { ObjectStore, controllerUid } from './object-store.js'

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
