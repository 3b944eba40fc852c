import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import { objectKey } from '../../core/object-key.js'
import { ObjectStore } from '../../runtime/object-store.js'
import type { ObjectReader } from '../../runtime/object-store.js'
import { claimCandidates } from './claim-children.js'

function child(name: string, namespace: string, controllerUid?: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace,
      uid: `uid-${namespace}-${name}`,
      ...(controllerUid === undefined
        ? {}
        : {
            ownerReferences: [
              { apiVersion: 'x/v1', kind: 'P', name: 'p', uid: controllerUid, controller: true },
            ],
          }),
    },
  }
}

function parent(uid: string, namespace?: string): KubeObject {
  return {
    apiVersion: 'x/v1',
    kind: 'P',
    metadata: { name: uid, uid, ...(namespace === undefined ? {} : { namespace }) },
  }
}

/** Wraps a store and counts every object its reads hand out: what a sync visits. */
function counting(store: ObjectReader): { reader: ObjectReader; visits: () => number } {
  let visits = 0
  const count = <T extends KubeObject[]>(objects: T): T => {
    visits += objects.length
    return objects
  }
  const reader: ObjectReader = {
    get: (key) => store.get(key),
    list: () => count(store.list()),
    listByNamespace: (namespace) => count(store.listByNamespace(namespace)),
    listByControllerUid: (uid) => count(store.listByControllerUid(uid)),
    listOrphans: (namespace) => count(store.listOrphans(namespace)),
    get size() {
      return store.size
    },
  }
  return { reader, visits: () => visits }
}

/** A namespace with one parent's 2 children, 3 orphans, and `others` parents' 2 children each. */
function namespaceWith(others: number): ObjectStore {
  const store = new ObjectStore()
  store.upsert(child('mine-1', 'ns', 'p0'))
  store.upsert(child('mine-2', 'ns', 'p0'))
  for (const name of ['orphan-1', 'orphan-2', 'orphan-3']) store.upsert(child(name, 'ns'))
  for (let i = 1; i <= others; i += 1) {
    store.upsert(child(`other-${i}-a`, 'ns', `p${i}`))
    store.upsert(child(`other-${i}-b`, 'ns', `p${i}`))
  }
  store.upsert(child('elsewhere', 'other-ns'))
  store.upsert(child('mine-elsewhere', 'other-ns', 'p0'))
  return store
}

describe('claimCandidates', () => {
  it("lists the parent's own children and its namespace's orphans", () => {
    const keys = claimCandidates(namespaceWith(5), parent('p0', 'ns')).map((o) => objectKey(o))
    assert.deepEqual(keys, ['ns/mine-1', 'ns/mine-2', 'ns/orphan-1', 'ns/orphan-2', 'ns/orphan-3'])
  })

  it('looks in every namespace for a cluster-scoped parent', () => {
    const keys = claimCandidates(namespaceWith(5), parent('p0')).map((o) => objectKey(o))
    assert.deepEqual(keys.sort(), [
      'ns/mine-1',
      'ns/mine-2',
      'ns/orphan-1',
      'ns/orphan-2',
      'ns/orphan-3',
      'other-ns/elsewhere',
      'other-ns/mine-elsewhere',
    ])
  })

  it('visits as many objects with 100× more unrelated children in the namespace', () => {
    // A complexity check, not a timing: the objects a sync touches must not grow with the
    // children of other parents (the O(namespace) scan this replaced was 46 % of busy time).
    const visitsWith = (others: number): number => {
      const { reader, visits } = counting(namespaceWith(others))
      claimCandidates(reader, parent('p0', 'ns'))
      return visits()
    }
    const small = visitsWith(50)
    const large = visitsWith(5_000)
    assert.equal(small, 6, 'three own children (one in another namespace) and three orphans')
    assert.equal(large, small)
  })
})
