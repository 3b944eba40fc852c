import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import type { UpdateMethod } from '../../api/composite-controller-spec.js'
import { LAST_APPLIED_ANNOTATION, LastAppliedError, setLastApplied } from './dynamic-apply.js'
import type { DesiredChildren } from '../../api/desired-children.js'
import { planChildren } from './plan-children.js'
import type { ChildPlan, ChildType } from './plan-children.js'

const POD = 'Pod.v1'
const SERVICE = 'Service.v1'
const CONFIG_MAP = 'ConfigMap.v1'

const parent: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'Web',
  metadata: { name: 'web', namespace: 'ns', uid: 'uid-web' },
}

const CONTROLLER_REF = {
  apiVersion: 'example.com/v1',
  kind: 'Web',
  name: 'web',
  uid: 'uid-web',
  controller: true,
  blockOwnerDeletion: true,
}

function types(methods: Record<string, UpdateMethod>): Map<string, ChildType> {
  return new Map(
    Object.entries(methods).map(([type, updateMethod]) => {
      const kind = type.split('.')[0] ?? ''
      const ref = { group: '', version: 'v1', resource: `${kind.toLowerCase()}s`, namespaced: true }
      return [type, { ref, updateMethod }]
    })
  )
}

function child(kind: string, name: string, fields: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'v1', kind, metadata: { name, namespace: 'ns' }, ...fields }
}

/** What the server holds after creating `desired`: the created object plus server fields. */
function live(desired: KubeObject, uid: string, extra: Record<string, unknown> = {}): KubeObject {
  const created = setLastApplied(desired)
  return {
    ...created,
    metadata: {
      ...created.metadata,
      uid,
      resourceVersion: '7',
      creationTimestamp: '2024-01-02T03:04:05Z',
      ownerReferences: [CONTROLLER_REF],
    },
    ...extra,
  }
}

function byType(
  entries: Record<string, readonly KubeObject[]>
): Map<string, Map<string, KubeObject>> {
  return new Map(
    Object.entries(entries).map(([type, objects]) => [
      type,
      new Map(objects.map((o) => [`${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`, o])),
    ])
  )
}

function keys(entries: readonly { type: string; key: string }[]): string[] {
  return entries.map((e) => `${e.type} ${e.key}`)
}

function summary(plan: ChildPlan): Record<string, string[]> {
  return {
    delete: keys(plan.delete),
    create: keys(plan.create),
    update: keys(plan.update),
    recreate: keys(plan.recreate),
    unchanged: keys(plan.unchanged),
    skipped: plan.skipped.map((s) => `${s.type} ${s.key} ${s.reason}`),
    failed: keys(plan.failed),
  }
}

const EMPTY = {
  delete: [],
  create: [],
  update: [],
  recreate: [],
  unchanged: [],
  skipped: [],
  failed: [],
}

const deleting = { deletionTimestamp: '2024-01-02T03:04:05Z' }

describe('planChildren', () => {
  it('creates every desired child when nothing is observed, with last-applied and controller ref', () => {
    const pod = child('Pod', 'a', { spec: { image: 'nginx' } })
    const plan = planChildren(
      byType({ [POD]: [] }),
      byType({ [POD]: [pod] }),
      types({ [POD]: 'OnDelete' }),
      parent
    )
    assert.deepEqual(summary(plan), { ...EMPTY, create: ['Pod.v1 ns/a'] })
    const created = plan.create[0]?.object
    assert.ok(created)
    assert.deepEqual(created.metadata.ownerReferences, [CONTROLLER_REF])
    assert.deepEqual(
      JSON.parse(created.metadata.annotations?.[LAST_APPLIED_ANNOTATION] ?? ''),
      pod,
      'the annotation records the object as the hook asked for it, before the owner reference'
    )
    assert.deepEqual(created['spec'], { image: 'nginx' })
    assert.deepEqual(plan.steps, plan.create)
  })

  it('does not add a second owner reference when the child already names the parent', () => {
    const own = { ...CONTROLLER_REF, controller: false }
    const pod: KubeObject = { ...child('Pod', 'a'), metadata: { ...child('Pod', 'a').metadata } }
    pod.metadata.ownerReferences = [own]
    const plan = planChildren(
      new Map(),
      byType({ [POD]: [pod] }),
      types({ [POD]: 'OnDelete' }),
      parent
    )
    assert.deepEqual(plan.create[0]?.object.metadata.ownerReferences, [own])
  })

  it('changes nothing for a child whose merged object equals the observed one', () => {
    const pod = child('Pod', 'a', { spec: { image: 'nginx' } })
    for (const method of ['OnDelete', 'Recreate', 'InPlace'] as const) {
      const plan = planChildren(
        byType({ [POD]: [live(pod, 'uid-a', { status: { phase: 'Running' } })] }),
        byType({ [POD]: [pod] }),
        types({ [POD]: method }),
        parent
      )
      assert.deepEqual(summary(plan), { ...EMPTY, unchanged: ['Pod.v1 ns/a'] }, method)
      assert.deepEqual(plan.steps, [])
    }
  })

  it('updates a changed child in place under InPlace and RollingInPlace, keeping server fields', () => {
    const before = child('Service', 's', { spec: { port: 80 } })
    const after = child('Service', 's', { spec: { port: 81 } })
    for (const method of ['InPlace', 'RollingInPlace'] as const) {
      const observed = live(before, 'uid-s', { status: { loadBalancer: {} } })
      const plan = planChildren(
        byType({ [SERVICE]: [observed] }),
        byType({ [SERVICE]: [after] }),
        types({ [SERVICE]: method }),
        parent
      )
      assert.deepEqual(summary(plan), { ...EMPTY, update: ['Service.v1 ns/s'] }, method)
      const update = plan.update[0]
      assert.ok(update)
      assert.equal(update.method, method)
      assert.equal(update.observed, observed)
      assert.deepEqual(update.object['spec'], { port: 81 })
      assert.deepEqual(update.object['status'], { loadBalancer: {} })
      assert.equal(update.object.metadata.uid, 'uid-s')
      assert.equal(update.object.metadata.resourceVersion, '7')
      assert.deepEqual(
        JSON.parse(update.object.metadata.annotations?.[LAST_APPLIED_ANNOTATION] ?? ''),
        after
      )
      assert.deepEqual(plan.steps, [update])
    }
  })

  it('deletes a changed child so the next sync recreates it, under Recreate and RollingRecreate', () => {
    const before = child('Pod', 'a', { spec: { image: 'nginx:1' } })
    const after = child('Pod', 'a', { spec: { image: 'nginx:2' } })
    for (const method of ['Recreate', 'RollingRecreate'] as const) {
      const observed = live(before, 'uid-a')
      const plan = planChildren(
        byType({ [POD]: [observed] }),
        byType({ [POD]: [after] }),
        types({ [POD]: method }),
        parent
      )
      assert.deepEqual(summary(plan), { ...EMPTY, recreate: ['Pod.v1 ns/a'] }, method)
      const recreate = plan.recreate[0]
      assert.ok(recreate)
      assert.equal(recreate.method, method)
      assert.equal(recreate.object, observed, 'the observed object, whose UID guards the delete')
      assert.deepEqual(recreate.merged['spec'], { image: 'nginx:2' })
      assert.deepEqual(plan.steps, [recreate])
    }
  })

  it('takes a child back from server-side apply by writing the annotation only, never recreating it', () => {
    const desired = child('Pod', 'a', { spec: { image: 'nginx:1' } })
    // What server-side apply leaves: the same content, no last-applied annotation.
    const observed: KubeObject = {
      ...desired,
      metadata: {
        ...desired.metadata,
        uid: 'uid-a',
        resourceVersion: '7',
        ownerReferences: [CONTROLLER_REF],
      },
    }
    for (const method of ['Recreate', 'RollingRecreate', 'InPlace'] as const) {
      const plan = planChildren(
        byType({ [POD]: [observed] }),
        byType({ [POD]: [desired] }),
        types({ [POD]: method }),
        parent
      )
      assert.deepEqual(summary(plan), { ...EMPTY, update: ['Pod.v1 ns/a'] }, method)
      const update = plan.update[0]
      assert.ok(update)
      assert.equal(update.method, method)
      assert.ok(update.object.metadata.annotations?.[LAST_APPLIED_ANNOTATION])
    }
    const changed = child('Pod', 'a', { spec: { image: 'nginx:2' } })
    const plan = planChildren(
      byType({ [POD]: [observed] }),
      byType({ [POD]: [changed] }),
      types({ [POD]: 'Recreate' }),
      parent
    )
    assert.deepEqual(summary(plan), { ...EMPTY, recreate: ['Pod.v1 ns/a'] }, 'a real change')
  })

  it('lists every desired child of a declared type for appliers that decide themselves', () => {
    const observed = live(child('Pod', 'a'), 'uid-a')
    const plan = planChildren(
      byType({ [POD]: [observed] }),
      byType({ [POD]: [child('Pod', 'a'), child('Pod', 'b')], [SERVICE]: [child('Service', 's')] }),
      types({ [POD]: 'InPlace' }),
      parent
    )
    assert.deepEqual(
      plan.apply.map((a) => [a.key, a.observed === observed, a.method]),
      [
        ['ns/a', true, 'InPlace'],
        ['ns/b', false, 'InPlace'],
      ]
    )
    assert.deepEqual(plan.controllerRef, CONTROLLER_REF)
  })

  it('leaves a changed child alone under OnDelete', () => {
    const observed = live(child('Pod', 'a', { spec: { image: 'nginx:1' } }), 'uid-a')
    const plan = planChildren(
      byType({ [POD]: [observed] }),
      byType({ [POD]: [child('Pod', 'a', { spec: { image: 'nginx:2' } })] }),
      types({ [POD]: 'OnDelete' }),
      parent
    )
    assert.deepEqual(summary(plan), { ...EMPTY, skipped: ['Pod.v1 ns/a OnDelete'] })
    const skip = plan.skipped[0]
    assert.ok(skip)
    assert.equal(skip.object, observed)
    assert.equal(skip.desired, true)
    assert.deepEqual(plan.steps, [])
  })

  it('deletes observed children that are no longer desired, with the observed object', () => {
    const gone = live(child('Pod', 'gone'), 'uid-gone')
    const kept = child('Pod', 'kept')
    const plan = planChildren(
      byType({ [POD]: [gone, live(kept, 'uid-kept')] }),
      byType({ [POD]: [kept] }),
      types({ [POD]: 'InPlace' }),
      parent
    )
    assert.deepEqual(summary(plan), {
      ...EMPTY,
      delete: ['Pod.v1 ns/gone'],
      unchanged: ['Pod.v1 ns/kept'],
    })
    assert.equal(plan.delete[0]?.object, gone)
  })

  it('deletes every observed child of a declared type the desired children do not mention', () => {
    const plan = planChildren(
      byType({ [POD]: [live(child('Pod', 'a'), 'uid-a')] }),
      new Map(),
      types({ [POD]: 'InPlace' }),
      parent
    )
    assert.deepEqual(summary(plan), { ...EMPTY, delete: ['Pod.v1 ns/a'] })
  })

  it('skips children that are already being deleted, desired or not', () => {
    const leaving = live(child('Pod', 'leaving'), 'uid-1')
    leaving.metadata = { ...leaving.metadata, ...deleting }
    const changing = live(child('Pod', 'changing', { spec: { v: 1 } }), 'uid-2')
    changing.metadata = { ...changing.metadata, ...deleting }
    const same = live(child('Pod', 'same'), 'uid-3')
    same.metadata = { ...same.metadata, ...deleting }
    const plan = planChildren(
      byType({ [POD]: [leaving, changing, same] }),
      byType({ [POD]: [child('Pod', 'changing', { spec: { v: 2 } }), child('Pod', 'same')] }),
      types({ [POD]: 'Recreate' }),
      parent
    )
    assert.deepEqual(summary(plan), {
      ...EMPTY,
      unchanged: ['Pod.v1 ns/same'],
      skipped: ['Pod.v1 ns/leaving Deleting', 'Pod.v1 ns/changing Deleting'],
    })
    assert.deepEqual(
      plan.skipped.map((s) => s.desired),
      [false, true]
    )
    assert.deepEqual(plan.steps, [])
  })

  it('ignores observed and desired children of undeclared types', () => {
    const plan = planChildren(
      byType({ [CONFIG_MAP]: [live(child('ConfigMap', 'stray'), 'uid-c')], [POD]: [] }),
      byType({ [SERVICE]: [child('Service', 's')], [POD]: [child('Pod', 'a')] }),
      types({ [POD]: 'InPlace' }),
      parent
    )
    assert.deepEqual(summary(plan), { ...EMPTY, create: ['Pod.v1 ns/a'] })
  })

  it('orders deletes by type, then runs the writes in the order of the desired children', () => {
    const observed = byType({
      [SERVICE]: [live(child('Service', 'old-s'), 'u1'), live(child('Service', 's'), 'u2')],
      [POD]: [live(child('Pod', 'old-p'), 'u3'), live(child('Pod', 'p', { spec: { v: 1 } }), 'u4')],
      [CONFIG_MAP]: [live(child('ConfigMap', 'old-c'), 'u5')],
    })
    const desired: DesiredChildren = byType({
      [SERVICE]: [child('Service', 'new-s'), child('Service', 's', { spec: { v: 2 } })],
      [POD]: [child('Pod', 'p', { spec: { v: 2 } }), child('Pod', 'new-p')],
    })
    const plan = planChildren(
      observed,
      desired,
      types({ [SERVICE]: 'InPlace', [POD]: 'Recreate', [CONFIG_MAP]: 'OnDelete' }),
      parent
    )
    assert.deepEqual(keys(plan.delete), [
      'ConfigMap.v1 ns/old-c',
      'Pod.v1 ns/old-p',
      'Service.v1 ns/old-s',
    ])
    assert.deepEqual(
      plan.steps.map((s) => `${s.op} ${s.type} ${s.key}`),
      [
        'delete ConfigMap.v1 ns/old-c',
        'delete Pod.v1 ns/old-p',
        'delete Service.v1 ns/old-s',
        'create Service.v1 ns/new-s',
        'update Service.v1 ns/s',
        'recreate Pod.v1 ns/p',
        'create Pod.v1 ns/new-p',
      ]
    )
  })

  it('reports a child with an unreadable last-applied annotation and plans the others', () => {
    const broken = live(child('Pod', 'broken'), 'uid-b')
    broken.metadata.annotations = { [LAST_APPLIED_ANNOTATION]: '{not json' }
    const brokenLeaving = live(child('Pod', 'leaving'), 'uid-l')
    brokenLeaving.metadata.annotations = { [LAST_APPLIED_ANNOTATION]: '[]' }
    brokenLeaving.metadata.deletionTimestamp = deleting.deletionTimestamp
    const plan = planChildren(
      byType({ [POD]: [broken, brokenLeaving] }),
      byType({ [POD]: [child('Pod', 'broken'), child('Pod', 'leaving'), child('Pod', 'new')] }),
      types({ [POD]: 'InPlace' }),
      parent
    )
    assert.deepEqual(summary(plan), {
      ...EMPTY,
      create: ['Pod.v1 ns/new'],
      failed: ['Pod.v1 ns/broken', 'Pod.v1 ns/leaving'],
    })
    for (const failure of plan.failed) assert.ok(failure.error instanceof LastAppliedError)
    assert.deepEqual(
      plan.steps.map((s) => s.op),
      ['fail', 'fail', 'create']
    )
  })

  it('changes none of its arguments', () => {
    const observed = byType({
      [POD]: [
        live(child('Pod', 'a', { spec: { v: 1 } }), 'uid-a'),
        live(child('Pod', 'gone'), 'uid-g'),
      ],
    })
    const desired: DesiredChildren = byType({
      [POD]: [child('Pod', 'a', { spec: { v: 2 } }), child('Pod', 'b')],
    })
    const snapshot = structuredClone({ observed, desired, parent })
    const plan = planChildren(observed, desired, types({ [POD]: 'InPlace' }), parent)
    assert.deepEqual(summary(plan), {
      ...EMPTY,
      delete: ['Pod.v1 ns/gone'],
      create: ['Pod.v1 ns/b'],
      update: ['Pod.v1 ns/a'],
    })
    assert.deepEqual({ observed, desired, parent }, snapshot)
    assert.notEqual(plan.create[0]?.object, desired.get(POD)?.get('ns/b'))
  })
})
