import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import type { UpdateMethod } from '../../api/composite-controller-spec.js'
import { ApiError, ConflictError, ForbiddenError } from '../../kube/api-error.js'
import type { PatchOptions, ResourceRef } from '../../kube/dynamic-client.js'
import type { DeleteOptions } from '../../kube/dynamic-client.js'
import { dynamicApplier } from './dynamic-applier.js'
import { LAST_APPLIED_ANNOTATION } from './dynamic-apply.js'
import { manageChildren } from './manage-children.js'
import { planChildren } from './plan-children.js'
import type { ChildType } from './plan-children.js'
import { ServerSideApplier } from './server-side-applier.js'

const CM = 'ConfigMap.v1'
const REF: ResourceRef = { group: '', version: 'v1', resource: 'configmaps', namespaced: true }
const parent: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'Web',
  metadata: { name: 'web', namespace: 'ns', uid: 'uid-web' },
}

function desired(data: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' }, data }
}

function observed(data: Record<string, string>, extra: Partial<KubeObject['metadata']> = {}) {
  const object = desired(data)
  return {
    ...object,
    metadata: { ...object.metadata, uid: 'uid-a', resourceVersion: '5', ...extra },
  } satisfies KubeObject
}

interface Call {
  readonly what: string
  readonly body?: unknown
  readonly options?: PatchOptions | DeleteOptions
}

/** A scripted API server: records calls; `onPatch` answers each patch. */
function fakeClient(
  onPatch: (body: unknown, options: PatchOptions) => KubeObject,
  live?: KubeObject
) {
  const calls: Call[] = []
  return {
    calls,
    client: {
      get: (_ref: ResourceRef, name: string): Promise<KubeObject> => {
        calls.push({ what: `get ${name}` })
        return live === undefined
          ? Promise.reject(new Error('no live object'))
          : Promise.resolve(live)
      },
      patch: (
        _ref: ResourceRef,
        name: string,
        body: unknown,
        options: PatchOptions
      ): Promise<KubeObject> => {
        calls.push({
          what: `patch ${options.type}${options.dryRun === true ? ' dry-run' : ''} ${name}`,
          body,
          options,
        })
        try {
          return Promise.resolve(onPatch(body, options))
        } catch (error) {
          return Promise.reject(error instanceof Error ? error : new Error(String(error)))
        }
      },
      create: () => Promise.reject(new Error('no create in SSA mode')),
      update: () => Promise.reject(new Error('no update in SSA mode')),
      delete: (_ref: ResourceRef, name: string, options?: DeleteOptions): Promise<unknown> => {
        calls.push({ what: `delete ${name}`, ...(options === undefined ? {} : { options }) })
        return Promise.resolve({})
      },
    },
  }
}

async function sync(
  applier: ServerSideApplier,
  client: ReturnType<typeof fakeClient>['client'],
  have: KubeObject | undefined,
  want: KubeObject,
  method: UpdateMethod
) {
  const types = new Map<string, ChildType>([[CM, { ref: REF, updateMethod: method }]])
  const plan = planChildren(
    new Map(have === undefined ? [] : [[CM, new Map([['ns/a', have]])]]),
    new Map([[CM, new Map([['ns/a', want]])]]),
    types,
    parent
  )
  return manageChildren(plan, { client, types, applier })
}

const refused = (statusCode: number, reason: string): ApiError =>
  new ApiError('refused', { statusCode, reason, request: { method: 'PATCH', path: '/x' } })

describe('ServerSideApplier', () => {
  it('creates with an apply patch carrying the field manager, force and the controller reference', async () => {
    const fake = fakeClient((body) => ({
      ...(body as KubeObject),
      metadata: { ...(body as KubeObject).metadata, uid: 'u', resourceVersion: '1' },
    }))
    const applier = new ServerSideApplier({ client: fake.client, fieldManager: 'mine' })
    const done = await sync(applier, fake.client, undefined, desired({ a: '1' }), 'InPlace')
    assert.deepEqual(done.created, ['ConfigMap.v1 ns/a'])
    const [call] = fake.calls
    assert.equal(call?.what, 'patch apply a')
    assert.deepEqual(call.options, {
      type: 'apply',
      fieldManager: 'mine',
      force: true,
      dryRun: false,
      namespace: 'ns',
    })
    const body = call.body as KubeObject
    assert.equal(body.metadata.ownerReferences?.[0]?.uid, 'uid-web')
  })

  it('ignores a conflict, as upstream', async () => {
    const fake = fakeClient(() => {
      throw new ConflictError('conflict', {
        statusCode: 409,
        reason: 'Conflict',
        request: { method: 'PATCH', path: '/x' },
      })
    })
    const applier = new ServerSideApplier({ client: fake.client })
    const done = await sync(
      applier,
      fake.client,
      observed({ a: '0' }),
      desired({ a: '1' }),
      'InPlace'
    )
    assert.deepEqual(done.updated, [])
  })

  for (const [name, error] of [
    ['BadRequest', refused(400, 'BadRequest')],
    [
      'Forbidden',
      new ForbiddenError('no', {
        statusCode: 403,
        reason: 'Forbidden',
        request: { method: 'PATCH', path: '/x' },
      }),
    ],
  ] as const) {
    it(`never deletes a Recreate child when the dry run is refused with ${name}`, async () => {
      const fake = fakeClient(() => {
        throw error
      })
      const applier = new ServerSideApplier({ client: fake.client })
      const done = await sync(
        applier,
        fake.client,
        observed({ a: '0' }),
        desired({ a: '1' }),
        'Recreate'
      )
      assert.deepEqual(done.deleted, [])
      assert.deepEqual(
        fake.calls.map((c) => c.what),
        ['patch apply dry-run a']
      )
    })
  }

  it('fails the sync, without a delete, on another dry-run error (422 Invalid)', async () => {
    const fake = fakeClient(() => {
      throw refused(422, 'Invalid')
    })
    const applier = new ServerSideApplier({ client: fake.client })
    await assert.rejects(
      sync(applier, fake.client, observed({ a: '0' }), desired({ a: '1' }), 'Recreate')
    )
    assert.ok(!fake.calls.some((c) => c.what.startsWith('delete')))
  })

  it('recreates only when the dry run changes the child, with a UID precondition', async () => {
    const have = observed({ a: '0' })
    const same = fakeClient(() => ({ ...have, metadata: { ...have.metadata, managedFields: [] } }))
    const keep = new ServerSideApplier({ client: same.client })
    assert.deepEqual(
      (await sync(keep, same.client, have, desired({ a: '1' }), 'Recreate')).deleted,
      []
    )

    const stale = fakeClient(() => ({
      ...have,
      data: { a: '1' },
      metadata: { ...have.metadata, resourceVersion: '6' },
    }))
    const wait = new ServerSideApplier({ client: stale.client })
    const behind = await sync(wait, stale.client, have, desired({ a: '1' }), 'Recreate')
    assert.deepEqual(behind.deleted, [], 'no delete while the cache is behind the server')

    const changed = fakeClient(() => ({ ...have, data: { a: '1' } }))
    const replace = new ServerSideApplier({ client: changed.client })
    const done = await sync(replace, changed.client, have, desired({ a: '1' }), 'Recreate')
    assert.deepEqual(done.deleted, ['ConfigMap.v1 ns/a'])
    const del = changed.calls.find((c) => c.what === 'delete a')
    assert.deepEqual((del?.options as DeleteOptions).preconditions, { uid: 'uid-a' })
  })

  it('takes an InPlace child over from the dynamic apply: one guarded JSON patch, then the apply', async () => {
    const legacy = observed({ a: '1' }, { annotations: { [LAST_APPLIED_ANNOTATION]: '{}' } })
    const live: KubeObject = {
      ...legacy,
      metadata: {
        ...legacy.metadata,
        managedFields: [
          {
            manager: 'metacontroller-ts',
            operation: 'Update',
            apiVersion: 'v1',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:data': { 'f:a': {} } },
          },
        ],
      },
    }
    const fake = fakeClient(
      (body) => ({
        ...legacy,
        ...(Array.isArray(body) ? {} : { data: { a: '1' } }),
        metadata: { ...legacy.metadata, resourceVersion: '7' },
      }),
      live
    )
    const applier = new ServerSideApplier({ client: fake.client })
    const done = await sync(applier, fake.client, legacy, desired({ a: '1' }), 'InPlace')
    assert.deepEqual(done, { created: [], updated: ['ConfigMap.v1 ns/a'], deleted: [] })
    assert.deepEqual(
      fake.calls.map((c) => c.what),
      ['get a', 'patch json a', 'patch apply a']
    )
    assert.deepEqual(fake.calls[1]?.body, [
      { op: 'test', path: '/metadata/resourceVersion', value: '5' },
      {
        op: 'remove',
        path: '/metadata/annotations/metacontroller.k8s.io~1last-applied-configuration',
      },
      {
        op: 'replace',
        path: '/metadata/managedFields',
        value: [
          {
            manager: 'metacontroller',
            operation: 'Apply',
            apiVersion: 'v1',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:data': { 'f:a': {} } },
          },
        ],
      },
    ])
  })

  it('sends nothing for a child it applied that nobody wrote since, and re-applies after drift', async () => {
    let version = 10
    const fake = fakeClient((body) => {
      const object = body as KubeObject
      return {
        ...object,
        metadata: { ...object.metadata, uid: 'uid-a', resourceVersion: String(++version) },
      }
    })
    const applier = new ServerSideApplier({ client: fake.client })
    await sync(applier, fake.client, undefined, desired({ a: '1' }), 'InPlace')
    const applied = observed({ a: '1' }, { resourceVersion: '11', ownerReferences: [] })
    assert.deepEqual(
      (await sync(applier, fake.client, applied, desired({ a: '1' }), 'InPlace')).updated,
      []
    )
    const drifted = {
      ...applied,
      data: { a: 'x' },
      metadata: { ...applied.metadata, resourceVersion: '12' },
    }
    assert.deepEqual(
      (await sync(applier, fake.client, drifted, desired({ a: '1' }), 'InPlace')).updated,
      ['ConfigMap.v1 ns/a']
    )
    assert.equal(fake.calls.length, 2)
  })

  describe('isUpToDate (the rollout asks it before moving on)', () => {
    const owner = {
      apiVersion: 'example.com/v1',
      kind: 'Web',
      name: 'web',
      uid: 'uid-web',
      controller: true,
      blockOwnerDeletion: true,
    }
    const applyEcho = () => {
      let version = 10
      return fakeClient((body) => {
        const object = body as KubeObject
        return {
          ...object,
          metadata: { ...object.metadata, uid: 'uid-a', resourceVersion: String(++version) },
        }
      })
    }

    it('holds for a child it applied, with no last-applied annotation (the dynamic apply never says so)', async () => {
      const fake = applyEcho()
      const applier = new ServerSideApplier({ client: fake.client })
      await sync(applier, fake.client, undefined, desired({ v: '2' }), 'RollingInPlace')
      const child = observed({ v: '2' }, { resourceVersion: '11', ownerReferences: [owner] })
      assert.equal(applier.isUpToDate(CM, child, desired({ v: '2' })), true)
      assert.equal(dynamicApplier.isUpToDate(CM, child, desired({ v: '2' })), false)
    })

    it('fails while a desired field does not hold its value', () => {
      const applier = new ServerSideApplier({ client: fakeClient(() => parent).client })
      const child = observed({ v: '1' }, { ownerReferences: [owner] })
      assert.equal(applier.isUpToDate(CM, child, desired({ v: '2' })), false)
    })

    it('fails when what it applied at the observed version is not what is desired now (a dropped field)', async () => {
      const fake = applyEcho()
      const applier = new ServerSideApplier({ client: fake.client })
      await sync(applier, fake.client, undefined, desired({ v: '1', extra: 'x' }), 'RollingInPlace')
      const child = observed(
        { v: '1', extra: 'x' },
        { resourceVersion: '11', ownerReferences: [owner] }
      )
      // Every desired field holds, but the applied configuration still owns `extra`.
      assert.equal(applier.isUpToDate(CM, child, desired({ v: '1' })), false)
      assert.equal(applier.isUpToDate(CM, child, desired({ v: '1', extra: 'x' })), true)
    })

    it('falls back to the fields alone for a child it has no record of (after a restart)', () => {
      const applier = new ServerSideApplier({ client: fakeClient(() => parent).client })
      const child = observed({ v: '2', other: 'kept' }, { ownerReferences: [owner] })
      assert.equal(applier.isUpToDate(CM, child, desired({ v: '2' })), true)
    })
  })
})
