import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../core/kube-object.js'
import type { ResourceRef } from '../kube/dynamic-client.js'
import { OfflineError } from './offline-error.js'
import { asDeleting, cacheOf, seedCluster } from './seed-cluster.js'

const PARENTS: ResourceRef = {
  group: 'example.com',
  version: 'v1',
  resource: 'things',
  namespaced: true,
}
const PODS: ResourceRef = { group: '', version: 'v1', resource: 'pods', namespaced: true }

function object(apiVersion: string, kind: string, name: string, namespace?: string): KubeObject {
  return { apiVersion, kind, metadata: { name, ...(namespace === undefined ? {} : { namespace }) } }
}

describe('seedCluster', () => {
  it('holds the parent and every object given, readable through a cache per resource', () => {
    const parent = object('example.com/v1', 'Thing', 'a', 'ns')
    const pods = [object('v1', 'Pod', 'p1', 'ns'), object('v1', 'Pod', 'p2', 'ns')]
    const cluster = seedCluster(PARENTS, parent, [[PODS, pods]])
    assert.deepEqual(
      cluster.objects(PODS).map((o) => o.metadata.name),
      ['p1', 'p2']
    )
    assert.equal(cacheOf(cluster, PARENTS).get('ns/a')?.metadata.name, 'a')
  })

  it('reports an object the cluster refuses as an offline error naming the cause', () => {
    const parent = object('example.com/v1', 'Thing', 'a', 'ns')
    assert.throws(
      () => seedCluster(PARENTS, parent, [[PODS, [object('v1', 'Pod', 'p1')]]]),
      (error: unknown) =>
        error instanceof OfflineError && error.message.startsWith('cannot render: ')
    )
  })
})

describe('asDeleting', () => {
  it('marks a copy deleted and held by the finalizer, keeping other finalizers', () => {
    const parent = object('example.com/v1', 'Thing', 'a', 'ns')
    parent.metadata.finalizers = ['other']
    const deleting = asDeleting(parent, 'metacontroller.io/x')
    assert.deepEqual(deleting.metadata.finalizers, ['other', 'metacontroller.io/x'])
    assert.match(deleting.metadata.deletionTimestamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    assert.equal(parent.metadata.deletionTimestamp, undefined)
    assert.deepEqual(parent.metadata.finalizers, ['other'])
  })

  it('adds the finalizer only once', () => {
    const parent = object('example.com/v1', 'Thing', 'a', 'ns')
    parent.metadata.finalizers = ['metacontroller.io/x']
    assert.deepEqual(asDeleting(parent, 'metacontroller.io/x').metadata.finalizers, [
      'metacontroller.io/x',
    ])
  })
})
