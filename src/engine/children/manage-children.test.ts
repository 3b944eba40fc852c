import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import type { UpdateMethod } from '../../api/composite-controller-spec.js'
import {
  AlreadyExistsError,
  ConflictError,
  InvalidError,
  NotFoundError,
} from '../../kube/api-error.js'
import type { ApiError } from '../../kube/api-error.js'
import type { DeleteOptions, ResourceRef } from '../../kube/dynamic-client.js'
import { LAST_APPLIED_ANNOTATION, setLastApplied } from './dynamic-apply.js'
import { manageChildren } from './manage-children.js'
import { planChildren } from './plan-children.js'
import type { ChildType } from './manage-children.js'

const POD_REF: ResourceRef = { group: '', version: 'v1', resource: 'pods', namespaced: true }

const parent: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'Web',
  metadata: { name: 'web', namespace: 'ns', uid: 'uid-web' },
}

type Call =
  | { op: 'create'; name: string; object: KubeObject }
  | { op: 'update'; name: string; object: KubeObject }
  | { op: 'delete'; name: string; options: DeleteOptions }

/** Records calls; `fail` maps an object name to the error its call throws. */
class FakeClient {
  readonly calls: Call[] = []
  readonly fail = new Map<string, Error>()

  create(_ref: ResourceRef, object: KubeObject): Promise<KubeObject> {
    return this.#record({ op: 'create', name: object.metadata.name ?? '', object }, object)
  }

  update(_ref: ResourceRef, object: KubeObject): Promise<KubeObject> {
    return this.#record({ op: 'update', name: object.metadata.name ?? '', object }, object)
  }

  delete(_ref: ResourceRef, name: string, options: DeleteOptions): Promise<unknown> {
    return this.#record({ op: 'delete', name, options }, {})
  }

  #record<T>(call: Call, result: T): Promise<T> {
    this.calls.push(call)
    const error = this.fail.get(call.name)
    return error === undefined ? Promise.resolve(result) : Promise.reject(error)
  }
}

function apiError<E extends ApiError>(
  kind: new (message: string, fields: ConstructorParameters<typeof ApiError>[1]) => E,
  message: string
): E {
  return new kind(message, { statusCode: 409, reason: '', request: { method: 'X', path: '/' } })
}

function pod(name: string, spec: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' }, spec }
}

function live(desired: KubeObject, uid: string): KubeObject {
  const created = setLastApplied(desired)
  return { ...created, metadata: { ...created.metadata, uid, resourceVersion: '3' } }
}

function pods(objects: readonly KubeObject[]): Map<string, Map<string, KubeObject>> {
  return new Map([['Pod.v1', new Map(objects.map((o) => [`ns/${o.metadata.name ?? ''}`, o]))]])
}

function types(updateMethod: UpdateMethod): Map<string, ChildType> {
  return new Map([['Pod.v1', { ref: POD_REF, updateMethod }]])
}

async function manage(
  client: FakeClient,
  observed: readonly KubeObject[],
  desired: readonly KubeObject[],
  method: UpdateMethod
): ReturnType<typeof manageChildren> {
  const plan = planChildren(pods(observed), pods(desired), types(method), parent)
  return manageChildren(plan, { client, types: types(method) })
}

describe('manageChildren', () => {
  it('deletes first, then creates and updates in desired order, and reports what it did', async () => {
    const client = new FakeClient()
    const result = await manage(
      client,
      [live(pod('gone'), 'uid-gone'), live(pod('a', { v: 1 }), 'uid-a')],
      [pod('new'), pod('a', { v: 2 })],
      'InPlace'
    )
    assert.deepEqual(
      client.calls.map((c) => `${c.op} ${c.name}`),
      ['delete gone', 'create new', 'update a']
    )
    assert.deepEqual(result, {
      created: ['Pod.v1 ns/new'],
      updated: ['Pod.v1 ns/a'],
      deleted: ['Pod.v1 ns/gone'],
    })
    const del = client.calls[0]
    assert.equal(del?.op, 'delete')
    assert.deepEqual(del.options, {
      namespace: 'ns',
      preconditions: { uid: 'uid-gone' },
      propagationPolicy: 'Background',
    })
    const create = client.calls[1]
    assert.equal(create?.op, 'create')
    assert.ok(create.object.metadata.annotations?.[LAST_APPLIED_ANNOTATION])
    assert.equal(create.object.metadata.ownerReferences?.[0]?.uid, 'uid-web')
  })

  it('counts a Recreate as a delete', async () => {
    const client = new FakeClient()
    const result = await manage(
      client,
      [live(pod('a', { v: 1 }), 'uid-a')],
      [pod('a', { v: 2 })],
      'Recreate'
    )
    assert.deepEqual(
      client.calls.map((c) => `${c.op} ${c.name}`),
      ['delete a']
    )
    assert.deepEqual(result, { created: [], updated: [], deleted: ['Pod.v1 ns/a'] })
  })

  it('ignores the expected races and does not report those children', async () => {
    const client = new FakeClient()
    client.fail.set('gone', apiError(NotFoundError, 'not found'))
    client.fail.set('new', apiError(AlreadyExistsError, 'exists'))
    client.fail.set('a', apiError(ConflictError, 'conflict'))
    const result = await manage(
      client,
      [live(pod('gone'), 'uid-gone'), live(pod('a', { v: 1 }), 'uid-a')],
      [pod('new'), pod('a', { v: 2 })],
      'InPlace'
    )
    assert.deepEqual(result, { created: [], updated: [], deleted: [] })
  })

  it('carries on past failures and throws them all together, in order', async () => {
    const client = new FakeClient()
    client.fail.set('gone', apiError(InvalidError, 'delete refused'))
    client.fail.set('new', apiError(ConflictError, 'create conflict'))
    const broken = live(pod('broken', { v: 1 }), 'uid-b')
    broken.metadata.annotations = { [LAST_APPLIED_ANNOTATION]: '{' }
    await assert.rejects(
      manage(
        client,
        [live(pod('gone'), 'uid-gone'), broken],
        [pod('broken', { v: 2 }), pod('new'), pod('ok')],
        'InPlace'
      ),
      (error: unknown) => {
        assert.ok(error instanceof AggregateError)
        assert.deepEqual(
          error.errors.map((e: unknown) => (e as Error).name),
          ['InvalidError', 'LastAppliedError', 'ConflictError']
        )
        assert.match(error.message, /^cannot manage children: delete refused; can't read the /)
        return true
      }
    )
    assert.deepEqual(
      client.calls.map((c) => `${c.op} ${c.name}`),
      ['delete gone', 'create new', 'create ok']
    )
  })
})
