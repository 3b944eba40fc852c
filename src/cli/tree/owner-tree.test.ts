import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import { buildOwnerTree, formatAge, formatOwnerTree, summarizeStatus } from './owner-tree.js'

const NOW = Date.parse('2026-01-01T00:10:00Z')

function object(
  kind: string,
  name: string,
  uid: string,
  owners: string[] = [],
  extra = {}
): KubeObject {
  return {
    apiVersion: 'v1',
    kind,
    metadata: {
      name,
      namespace: 'ns',
      uid,
      creationTimestamp: '2026-01-01T00:00:00Z',
      ownerReferences: owners.map((o) => ({ apiVersion: 'v1', kind: 'X', name: o, uid: o })),
    },
    ...extra,
  }
}

describe('owner tree', () => {
  it('nests children and grandchildren by owner UID, sorted by kind and name', () => {
    const root = object('PodService', 'web', 'p', [], {
      status: { conditions: [{ type: 'Ready', status: 'False', reason: 'PodPending' }] },
    })
    const objects = [
      object('Service', 'web', 's', ['p'], { spec: { type: 'ClusterIP', clusterIP: '10.0.0.7' } }),
      object('Pod', 'web', 'pod', ['p'], {
        status: { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False' }] },
      }),
      object('ConfigMap', 'extra', 'cm', ['pod']),
      object('ConfigMap', 'unrelated', 'u', ['other']),
    ]
    assert.deepEqual(formatOwnerTree(buildOwnerTree(root, objects), NOW), [
      'NAMESPACE  NAME                 READY  STATUS              AGE',
      'ns         PodService/web       False  PodPending          10m',
      'ns         ├─Pod/web            False  Pending             10m',
      'ns         │ └─ConfigMap/extra  -                          10m',
      'ns         └─Service/web        -      ClusterIP 10.0.0.7  10m',
    ])
  })

  it('cuts an ownership cycle instead of recursing forever', () => {
    const a = object('ConfigMap', 'a', 'a', ['b'])
    const b = object('ConfigMap', 'b', 'b', ['a'])
    const tree = buildOwnerTree(a, [a, b])
    assert.equal(tree.children.length, 1)
    assert.equal(tree.children[0]?.children.length, 0)
  })

  it('summarizes Available for objects without Ready, and Terminating first', () => {
    const deployment = object('Deployment', 'd', 'd', [], {
      status: {
        conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }],
      },
    })
    assert.deepEqual(summarizeStatus(deployment), {
      ready: 'True',
      status: 'MinimumReplicasAvailable',
    })
    const going = object('Pod', 'p', 'p', [], { status: { phase: 'Running' } })
    going.metadata.deletionTimestamp = '2026-01-01T00:00:00Z'
    assert.equal(summarizeStatus(going).status, 'Terminating')
    const plain = object('Greeting', 'g', 'g', [], { status: { ready: false } })
    assert.deepEqual(summarizeStatus(plain), { ready: 'False', status: '' })
  })

  it('prints ages as kubectl does', () => {
    const at = (seconds: number): string => new Date(NOW - seconds * 1000).toISOString()
    assert.equal(formatAge(at(42), NOW), '42s')
    assert.equal(formatAge(at(600), NOW), '10m')
    assert.equal(formatAge(at(3 * 3600), NOW), '3h')
    assert.equal(formatAge(at(5 * 86400), NOW), '5d')
    assert.equal(formatAge(undefined, NOW), '-')
  })
})
