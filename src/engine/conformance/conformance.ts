/**
 * The engine's conformance suite: the properties every controller kind must have, written once
 * against a {@link KindAdapter} and run on the in-memory {@link FakeCluster}.
 *
 * @remarks
 * The loop's own timers (the work queue's delayed requeues and retry backoff, the periodic
 * resync) run on the system clock: `ParentController` takes no clock. The properties that depend
 * on them (`resyncAfterMs`, periodic resync) therefore wait in real time, tens of milliseconds,
 * and assert lower bounds only. Informers run on a fake clock.
 *
 * @module
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { JsonObject, KubeObject } from '../../core/kube-object.js'
import { controllerRefOf } from '../../core/owner-references.js'
import { LAST_APPLIED_ANNOTATION } from '../children/dynamic-apply.js'
import { CONFORMANCE_NAMESPACE, ConformanceHarness } from './conformance-harness.js'
import { fakeApiError } from '../../in-memory/fake-api-error.js'
import type { HarnessOptions, KindAdapter } from './conformance-harness.js'

export { CONFORMANCE_NAMESPACE, ConformanceHarness } from './conformance-harness.js'
export type {
  ConformanceAnswer,
  ConformanceHook,
  ConformanceRequest,
  HarnessOptions,
  HookCall,
  KindAdapter,
  KindBuildOptions,
  RecordedOutcome,
} from './conformance-harness.js'

/** Starts a harness, runs `body`, and always stops the harness. */
async function withHarness(
  adapter: KindAdapter,
  options: HarnessOptions,
  body: (h: ConformanceHarness) => Promise<void>
): Promise<void> {
  const harness = await ConformanceHarness.start(adapter, options)
  try {
    await body(harness)
  } finally {
    await harness.stop()
  }
}

function names(objects: readonly KubeObject[]): string[] {
  return objects.map((o) => o.metadata.name ?? '')
}

function assertStatusShows(subject: KubeObject | undefined, status: JsonObject): void {
  const actual = subject?.['status'] as JsonObject | undefined
  for (const [field, value] of Object.entries(status)) {
    assert.deepEqual(actual?.[field], value, `status.${field}`)
  }
}

/** Converges a subject `web` with one child `web-a` (data v=1) and status `{ phase: 'Ready' }`. */
async function converge(h: ConformanceHarness, adapter: KindAdapter): Promise<KubeObject> {
  h.sync = ({ subject }) => ({
    desired: [adapter.desiredChild(subject, 'web-a', { v: '1' })],
    status: { phase: 'Ready' },
  })
  await h.createSubject('web')
  await h.settle()
  assert.deepEqual(names(h.children()), ['web-a'])
  const subject = h.subject('web')
  assert.ok(subject !== undefined)
  assertStatusShows(subject, { phase: 'Ready' })
  h.cluster.clearWrites()
  return subject
}

/** Runs every conformance property against one kind. */
export function runConformanceSuite(adapter: KindAdapter): void {
  describe(`conformance: ${adapter.name}`, () => {
    childProperties(adapter)
    errorProperties(adapter)
    updateProperties(adapter)
    finalizeProperties(adapter)
    timingAndScopeProperties(adapter)
  })
}

function childProperties(adapter: KindAdapter): void {
  it('creates desired children with the controller reference and last-applied annotation, and deletes undesired ones with a UID precondition', () =>
    withHarness(adapter, {}, async (h) => {
      h.sync = ({ subject }) => ({
        desired: ['web-a', 'web-b'].map((n) => adapter.desiredChild(subject, n, { v: '1' })),
        status: { children: 2 },
      })
      const subject = await h.createSubject('web')
      await h.settle()
      const created = h.children()
      assert.deepEqual(names(created), ['web-a', 'web-b'])
      for (const child of created) {
        const ref = controllerRefOf(child)
        assert.equal(ref?.uid, subject.metadata.uid)
        assert.equal(ref?.kind, adapter.subject.kind)
        assert.ok(child.metadata.annotations?.[LAST_APPLIED_ANNOTATION] !== undefined)
      }
      assertStatusShows(h.subject('web'), { children: 2 })

      h.cluster.clearWrites()
      h.sync = ({ subject: s }) => ({ desired: [adapter.desiredChild(s, 'web-a', { v: '1' })] })
      const before = h.callsFor('web').length
      h.poke('web')
      await h.settle()
      const observed = h.callsFor('web')[before]?.request.observed ?? []
      assert.deepEqual(names(observed), ['web-a', 'web-b'], 'the hook saw both children')
      assert.deepEqual(names(h.children()), ['web-a'])
      const deletes = h.cluster.writes.filter((w) => w.method === 'delete')
      const uid = created[1]?.metadata.uid
      assert.deepEqual(
        deletes.map((w) => [w.resource, w.name, w.preconditions?.uid]),
        [[adapter.child.ref.resource, 'web-b', uid]]
      )
    }))

  it('makes zero writes on a periodic resync once converged', () =>
    withHarness(adapter, { resyncPeriodMs: 10 }, async (h) => {
      await converge(h, adapter)
      const before = h.callsFor('web').length
      await h.waitFor(() => h.callsFor('web').length >= before + 3, 'three periodic resyncs')
      await h.settle()
      assert.deepEqual(h.cluster.writes, [])
    }))
}

function errorProperties(adapter: KindAdapter): void {
  const unchangedAfter = (answer: 'throw' | 'undeclared') =>
    withHarness(adapter, {}, async (h) => {
      const subject = await converge(h, adapter)
      const children = h.children()
      h.sync = ({ subject: s }) => {
        if (answer === 'throw') throw new Error('hook exploded')
        return {
          desired: [adapter.desiredChild(s, 'web-a', { v: '2' }), adapter.undeclaredChild(s, 'x')],
          status: { phase: 'Changed' },
        }
      }
      h.poke('web')
      await h.waitFor(
        () => h.events.about(`${CONFORMANCE_NAMESPACE}/web`, 'SyncError').length > 0,
        'a SyncError event'
      )
      await h.settle()
      const [event] = h.events.about(`${CONFORMANCE_NAMESPACE}/web`, 'SyncError')
      assert.equal(event?.type, 'Warning')
      assert.deepEqual(h.cluster.writes, [], 'no write at all')
      assert.deepEqual(h.children(), children)
      assert.deepEqual(h.subject('web')?.['status'], subject['status'])
    })

  it('changes no child and no status, and records a Warning SyncError, when the hook throws', () =>
    unchangedAfter('throw'))

  it('changes no child and no status, and records a Warning SyncError, for an undeclared child type', () =>
    unchangedAfter('undeclared'))

  it('reports a failed child write and retries until it converges', () =>
    withHarness(adapter, {}, async (h) => {
      const match = {
        method: 'create',
        resource: adapter.child.ref.resource,
        name: 'web-a',
      } as const
      h.cluster.failNext(match, fakeApiError('InternalError', 'etcd hiccup'), 2)
      h.sync = ({ subject }) => ({ desired: [adapter.desiredChild(subject, 'web-a', { v: '1' })] })
      await h.createSubject('web')
      await h.waitFor(() => h.children().length === 1, 'the child, after the retries')
      const creates = h.cluster.writes.filter((w) => w.method === 'create' && w.name === 'web-a')
      assert.deepEqual(
        creates.map((w) => w.error ?? 'ok'),
        ['ApiError', 'ApiError', 'ok']
      )
      const errors = h.events.about(`${CONFORMANCE_NAMESPACE}/web`, 'SyncError')
      assert.ok(errors.length >= 2 && errors.every((e) => e.type === 'Warning'))
    }))
}

function updateProperties(adapter: KindAdapter): void {
  const changeChild = async (h: ConformanceHarness): Promise<void> => {
    h.sync = ({ subject }) => ({
      desired: [adapter.desiredChild(subject, 'web-a', { v: '2' })],
      status: { phase: 'Ready' },
    })
    h.poke('web')
    await h.settle()
  }

  it('updates a changed child in place under InPlace (same UID)', () =>
    withHarness(adapter, { updateMethod: 'InPlace' }, async (h) => {
      await converge(h, adapter)
      const [before] = h.children()
      await changeChild(h)
      const [after] = h.children()
      assert.equal(after?.metadata.uid, before?.metadata.uid)
      assert.deepEqual(after?.['data'], { v: '2' })
      assert.deepEqual(
        h.cluster.writes.map((w) => [w.method, w.name]),
        [['update', 'web-a']]
      )
    }))

  it('deletes then recreates a changed child under Recreate (new UID)', () =>
    withHarness(adapter, { updateMethod: 'Recreate' }, async (h) => {
      await converge(h, adapter)
      const [before] = h.children()
      await changeChild(h)
      const [after] = h.children()
      assert.notEqual(after?.metadata.uid, before?.metadata.uid)
      assert.deepEqual(after?.['data'], { v: '2' })
      assert.deepEqual(
        h.cluster.writes.map((w) => [w.method, w.name]),
        [
          ['delete', 'web-a'],
          ['create', 'web-a'],
        ]
      )
    }))
}

function finalizeProperties(adapter: KindAdapter): void {
  it('adds the finalizer before the first hook call, finalizes a deleting subject, and lets it go once finalized', () =>
    withHarness(adapter, { finalize: true }, async (h) => {
      h.sync = ({ subject }) => ({ desired: [adapter.desiredChild(subject, 'web-a', { v: '1' })] })
      h.finalize = ({ subject }) => ({
        desired: [adapter.desiredChild(subject, 'web-a', { v: '1' })],
        finalized: false,
      })
      await h.createSubject('web')
      await h.settle()
      const [first] = h.callsFor('web')
      assert.equal(first?.hook, 'sync')
      assert.ok(first.request.subject.metadata.finalizers?.includes(adapter.finalizer))
      assert.deepEqual(names(h.children()), ['web-a'])

      await h.deleteSubject('web')
      await h.settle()
      const last = h.callsFor('web').at(-1)
      assert.equal(last?.hook, 'finalize')
      assert.equal(last.request.finalizing, true)
      assert.ok(h.subject('web')?.metadata.deletionTimestamp !== undefined, 'held by the finalizer')

      h.finalize = () => ({ desired: [], finalized: true })
      h.poke('web')
      await h.settle()
      assert.equal(h.subject('web'), undefined)
    }))

  // Regression: the engine decided whether to manage children on the parent as it was before
  // `finalized: true` removed the finalizer, and so deleted children of a released parent.
  it('manages no child any more once a finalize answer released the deleting subject', () =>
    withHarness(adapter, { finalize: true }, async (h) => {
      h.sync = ({ subject }) => ({
        desired: ['web-a', 'web-b'].map((n) => adapter.desiredChild(subject, n, { v: '1' })),
      })
      h.finalize = () => ({ desired: [], finalized: true })
      await h.createSubject('web')
      await h.settle()
      assert.deepEqual(names(h.children()), ['web-a', 'web-b'])
      h.cluster.clearWrites()

      await h.deleteSubject('web')
      await h.settle()
      assert.equal(h.subject('web'), undefined)
      assert.deepEqual(names(h.children()), ['web-a', 'web-b'], 'the GC, not the engine, owns them')
      const childWrites = h.cluster.writes.filter((w) => w.resource === adapter.child.ref.resource)
      assert.deepEqual(childWrites, [])
    }))
}

function timingAndScopeProperties(adapter: KindAdapter): void {
  it('syncs again resyncAfterMs after a sync that asked for it', () =>
    withHarness(adapter, {}, async (h) => {
      const delayMs = 150
      let first = true
      h.sync = ({ subject }) => {
        const resyncAfterMs = first ? delayMs : 0
        first = false
        return { desired: [adapter.desiredChild(subject, 'web-a', { v: '1' })], resyncAfterMs }
      }
      await h.createSubject('web')
      await h.settle()
      const requeue = h.outcomes.find((o) => o.outcome.result === 'requeue_after')
      assert.deepEqual(requeue?.outcome, { result: 'requeue_after', afterMs: delayMs })
      const before = h.callsFor('web').length
      await h.waitFor(() => h.callsFor('web').length > before, 'the delayed resync')
      const resync = h.callsFor('web')[before]
      // Timers never fire early; 1 ms of slack covers rounding of performance.now() readings.
      assert.ok((resync?.at ?? 0) - requeue.at >= delayMs - 1, 'not before resyncAfterMs')
    }))

  it('ignores a subject outside the labelSelector of its rule', () =>
    withHarness(adapter, { subjectSelector: { matchLabels: { team: 'a' } } }, async (h) => {
      h.sync = ({ subject }) => ({
        desired: [adapter.desiredChild(subject, `${subject.metadata.name ?? ''}-a`, { v: '1' })],
      })
      await h.createSubject('outside', { team: 'b' })
      await h.createSubject('inside', { team: 'a' })
      await h.settle()
      assert.deepEqual(h.callsFor('outside'), [])
      assert.deepEqual(names(h.children()), ['inside-a'])
      const outsideWrites = h.cluster.writes.filter((w) => w.name.startsWith('outside'))
      assert.deepEqual(
        outsideWrites.map((w) => w.method),
        ['create'],
        'only the test created it'
      )
    }))
}
