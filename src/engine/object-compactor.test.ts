import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import type { KubeObject } from '../core/kube-object.js'
import { objectCompactor } from './object-compactor.js'

// V8's own answer to "is this object in the fast layout?", for the property the compactor exists
// for; the flag only enables the `%` syntax in functions compiled after it is set.
setFlagsFromString('--allow-natives-syntax')
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- V8's `%` syntax exists only in compiled source
const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (
  o: object
) => boolean

/** A child as the API server sends it, parsed from JSON as the informer does. */
function child(name: string, namespace = 'team-a-production'): KubeObject {
  return JSON.parse(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name,
        namespace,
        uid: `uid-${name}`,
        resourceVersion: '42',
        creationTimestamp: '2026-12-06T04:00:00Z',
        labels: { 'controller-uid': 'p-uid' },
        annotations: { 'metacontroller.k8s.io/last-applied-configuration': '{}' },
        ownerReferences: [
          {
            apiVersion: 'bench.metacontroller-ts.dev/v1',
            kind: 'BenchParent',
            name: 'p',
            uid: 'p-uid',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        managedFields: [{ manager: 'metacontroller-ts', operation: 'Update' }],
      },
      data: { part: 'a' },
    })
  ) as KubeObject
}

/** What the cache must hold: the object as sent without managedFields, fields in their order. */
function withoutManagedFields(object: KubeObject): string {
  return JSON.stringify(object, (key, value: unknown) =>
    key === 'managedFields' ? undefined : value
  )
}

describe('objectCompactor', () => {
  it('keeps every field but managedFields, in the order the server sent them', () => {
    const compact = objectCompactor()
    for (const object of [child('a'), child('b', 'other'), { ...child('c'), status: { n: 1 } }]) {
      const expected = withoutManagedFields(object)
      assert.equal(JSON.stringify(compact(object)), expected)
    }
  })

  it('keeps every object in V8 fast layout, where deleting the field would not', () => {
    // One delete of an object's last field may keep the fast layout; from the second object of
    // the same shape on, V8 turns each into a dictionary (measured on Node 20).
    const compact = objectCompactor()
    for (const name of ['a', 'b', 'c', 'd']) {
      const compacted = compact(child(name))
      assert.equal(hasFastProperties(compacted.metadata), true, name)
      assert.equal(hasFastProperties(compacted), true, name)
    }
  })

  it('leaves the object it was given unchanged', () => {
    const object = child('a')
    const before = JSON.stringify(object)
    objectCompactor()(object)
    assert.equal(JSON.stringify(object), before)
  })

  it('gives equal objects past its bound of shared strings', () => {
    const compact = objectCompactor(2)
    const namespaces = ['ns-one-of-many', 'ns-two-of-many', 'ns-three-of-many', 'ns-one-of-many']
    const compacted = namespaces.map((ns, i) => compact(child(`c${i}`, ns)))
    assert.deepEqual(
      compacted.map((o) => o.metadata.namespace),
      namespaces
    )
  })

  it('passes objects without metadata or with odd owner references through', () => {
    const compact = objectCompactor()
    const bare = { apiVersion: 'v1', kind: 'ConfigMap' } as unknown as KubeObject
    assert.equal(compact(bare), bare)
    const odd = { ...child('a'), metadata: { name: 'a', ownerReferences: ['x', null] } }
    assert.deepEqual(compact(odd as unknown as KubeObject).metadata.ownerReferences, ['x', null])
  })
})
