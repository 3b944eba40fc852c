import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import { objectKey } from '../../core/object-key.js'
import { ObjectStore } from '../../runtime/informers/object-store.js'
import { claimCandidates } from './claim-children.js'

function child(name: string, namespace: string, controllerUid?: string, app = 'mine'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace,
      uid: `uid-${namespace}-${name}`,
      labels: { app },
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

/**
 * A namespace with one parent's 2 children, 3 orphans, `others` parents' 2 children each, and
 * `strays` orphans without the parent's `app` label.
 */
function namespaceWith(others: number, strays = 0): ObjectStore {
  const store = new ObjectStore()
  store.upsert(child('mine-1', 'ns', 'p0'))
  store.upsert(child('mine-2', 'ns', 'p0'))
  for (const name of ['orphan-1', 'orphan-2', 'orphan-3']) store.upsert(child(name, 'ns'))
  for (let i = 1; i <= others; i += 1) {
    store.upsert(child(`other-${i}-a`, 'ns', `p${i}`, 'theirs'))
    store.upsert(child(`other-${i}-b`, 'ns', `p${i}`, 'theirs'))
  }
  for (let i = 1; i <= strays; i += 1) store.upsert(child(`stray-${i}`, 'ns', undefined, 'other'))
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
      const store = namespaceWith(others)
      claimCandidates(store, parent('p0', 'ns'))
      return store.visits
    }
    const small = visitsWith(50)
    const large = visitsWith(5_000)
    assert.equal(small, 6, 'three own children (one in another namespace) and three orphans')
    assert.equal(large, small)
  })

  it("leaves out orphans without the selector's equality labels", () => {
    const store = namespaceWith(5, 3)
    const keys = claimCandidates(store, parent('p0', 'ns'), [{ key: 'app', values: ['mine'] }])
    assert.deepEqual(
      keys.map((o) => objectKey(o)),
      ['ns/mine-1', 'ns/mine-2', 'ns/orphan-1', 'ns/orphan-2', 'ns/orphan-3']
    )
  })

  it('visits as many objects with 100× more orphans the selector cannot match', () => {
    // Orphans are few at steady state, but a namespace may hold thousands of unrelated objects
    // nobody controls: the selector's label index keeps them out of every sync but the first.
    const terms = [{ key: 'app', values: ['mine'] }]
    const visitsWith = (strays: number): { first: number; next: number } => {
      const store = namespaceWith(5, strays)
      claimCandidates(store, parent('p0', 'ns'), terms)
      const first = store.visits
      claimCandidates(store, parent('p0', 'ns'), terms)
      return { first, next: store.visits - first }
    }
    const small = visitsWith(100)
    const large = visitsWith(10_000)
    assert.equal(
      small.next,
      10,
      'three own children, and the seven objects labelled app=mine in every namespace'
    )
    assert.equal(large.next, small.next)
    // The first query indexed the label key: one pass over the store, once for its lifetime.
    assert.equal(large.first - large.next, 10_017, 'the whole store: 10,000 strays and 17 others')
  })
})
