// v1 (relative) and v2 (uniform) object maps, and the request envelopes built from them.
import { objectKey } from '../../core/object-key.js'
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import type { ObjectsByType } from '../hook-model.js'
import { controllerForHook, encodeCustomizeRequest } from './encode-request.js'
import {
  encodeRelativeObjectMap,
  encodeUniformObjectMap,
  isVisibleToV1,
  relativeObjectKey,
} from './object-map.js'

function object(kind: string, name: string, namespace?: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind,
    metadata: namespace === undefined ? { name } : { name, namespace },
  }
}

function byType(entries: Record<string, readonly KubeObject[]>): ObjectsByType {
  return new Map(
    Object.entries(entries).map(([type, objects]) => [
      type,
      new Map(objects.map((o) => [objectKey(o), o])),
    ])
  )
}

const namespacedParent = object('Widget', 'w', 'team-a')
const clusterParent = object('ClusterWidget', 'cw')

describe('relativeObjectKey', () => {
  it('prefixes the namespace only for a cluster-scoped parent and a namespaced object', () => {
    assert.equal(relativeObjectKey(clusterParent, object('Pod', 'p', 'ns')), 'ns/p')
    assert.equal(relativeObjectKey(clusterParent, object('Namespace', 'ns')), 'ns')
    assert.equal(relativeObjectKey(namespacedParent, object('Pod', 'p', 'team-a')), 'p')
    assert.equal(
      relativeObjectKey(
        { ...clusterParent, metadata: { name: 'cw', namespace: '' } },
        object('Pod', 'p', 'ns')
      ),
      'ns/p'
    )
  })
})

describe('isVisibleToV1', () => {
  it('shows everything to a cluster-scoped parent and only its namespace to a namespaced one', () => {
    assert.equal(isVisibleToV1(clusterParent, object('Pod', 'p', 'x')), true)
    assert.equal(isVisibleToV1(clusterParent, object('Namespace', 'x')), true)
    assert.equal(isVisibleToV1(namespacedParent, object('Pod', 'p', 'team-a')), true)
    assert.equal(isVisibleToV1(namespacedParent, object('Pod', 'p', 'team-b')), false)
    assert.equal(isVisibleToV1(namespacedParent, object('Namespace', 'team-a')), false)
  })
})

describe('encodeRelativeObjectMap', () => {
  it('drops foreign and cluster-scoped objects but keeps every type', () => {
    const objects = byType({
      'Pod.v1': [object('Pod', 'p', 'team-a'), object('Pod', 'p', 'team-b')],
      'Namespace.v1': [object('Namespace', 'team-a')],
      'Secret.v1': [],
    })
    assert.deepEqual(encodeRelativeObjectMap(objects, namespacedParent), {
      'Namespace.v1': {},
      'Pod.v1': { p: object('Pod', 'p', 'team-a') },
      'Secret.v1': {},
    })
  })

  it('keys namespaced objects ns/name for a cluster-scoped parent', () => {
    const objects = byType({ 'Pod.v1': [object('Pod', 'p', 'b'), object('Pod', 'p', 'a')] })
    const encoded = encodeRelativeObjectMap(objects, clusterParent)
    assert.deepEqual(Object.keys(encoded['Pod.v1'] ?? {}), ['a/p', 'b/p'])
  })
})

describe('encodeUniformObjectMap', () => {
  it('keeps uniform keys and every object', () => {
    const objects = byType({
      'Pod.v1': [object('Pod', 'p', 'team-b'), object('Pod', 'p', 'team-a')],
      'Namespace.v1': [object('Namespace', 'team-a')],
    })
    const encoded = encodeUniformObjectMap(objects)
    assert.deepEqual(Object.keys(encoded), ['Namespace.v1', 'Pod.v1'])
    assert.deepEqual(Object.keys(encoded['Pod.v1'] ?? {}), ['team-a/p', 'team-b/p'])
    assert.deepEqual(encodeUniformObjectMap(new Map()), {})
  })

  it('defines keys as own properties, never through a prototype setter', () => {
    const odd = new Map([['__proto__', new Map([['__proto__', object('Pod', 'x')]])]])
    const encoded = encodeUniformObjectMap(odd)
    assert.equal(Object.getPrototypeOf(encoded), Object.prototype)
    assert.deepEqual(Object.keys(encoded), ['__proto__'])
    assert.deepEqual(JSON.parse(JSON.stringify(encoded)), {
      ['__proto__']: { ['__proto__']: object('Pod', 'x') },
    })
  })
})

describe('controllerForHook', () => {
  it('always sends an empty status and leaves the input alone', () => {
    const controller: KubeObject = { ...object('CompositeController', 'c'), status: { x: 1 } }
    assert.deepEqual(controllerForHook(controller)['status'], {})
    assert.deepEqual(controller['status'], { x: 1 })
    assert.deepEqual(controllerForHook(object('DecoratorController', 'd'))['status'], {})
  })

  it('is applied to customize requests, which have only controller and parent', () => {
    const request = encodeCustomizeRequest({
      controller: object('CompositeController', 'c'),
      parent: namespacedParent,
    })
    assert.deepEqual(Object.keys(request), ['controller', 'parent'])
    assert.deepEqual(request.controller['status'], {})
  })
})
