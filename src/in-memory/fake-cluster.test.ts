import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../core/kube-object.js'
import {
  AlreadyExistsError,
  ConflictError,
  InvalidError,
  NotFoundError,
} from '../kube/api-error.js'
import type { ResourceRef } from '../kube/dynamic-client.js'
import type { WatchEvent } from '../kube/watch-event.js'
import { FakeClock } from '../runtime/clock/fake-clock.js'
import { SharedInformers } from '../runtime/informers/shared-informers.js'
import { fakeApiError } from './fake-api-error.js'
import { FakeCluster } from './fake-cluster.js'

const WIDGETS: ResourceRef = {
  group: 'example.com',
  version: 'v1',
  resource: 'widgets',
  namespaced: true,
}
const CONFIGMAPS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'configmaps',
  namespaced: true,
}

function widget(name: string, spec: Record<string, unknown> = { size: 1 }): KubeObject {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'ns' }, spec }
}

/** Reads `count` events of a watch opened from `resourceVersion`, then closes it. */
async function watchEvents(
  cluster: FakeCluster,
  resourceVersion: string,
  count: number,
  labelSelector?: string
): Promise<WatchEvent[]> {
  const abort = new AbortController()
  const watcher = cluster.listWatcherFactory()(
    WIDGETS,
    labelSelector === undefined ? {} : { labelSelector }
  )
  const stream = await watcher.watch({ resourceVersion, timeoutSeconds: 60, signal: abort.signal })
  const events: WatchEvent[] = []
  for await (const event of stream) {
    events.push(event)
    if (events.length === count) break
  }
  abort.abort()
  return events
}

describe('FakeCluster objects', () => {
  it('sets uid, generation 1, timestamps and increasing resourceVersions on create', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 2, 3, 4, 5))
    const cluster = new FakeCluster({ clock })
    const a = await cluster.create(WIDGETS, widget('a'))
    const b = await cluster.create(WIDGETS, widget('b'))
    assert.notEqual(a.metadata.uid, b.metadata.uid)
    assert.equal(a.metadata.generation, 1)
    assert.equal(a.metadata.creationTimestamp, '2026-01-02T03:04:05Z')
    assert.ok(Number(b.metadata.resourceVersion) > Number(a.metadata.resourceVersion))
    await assert.rejects(cluster.create(WIDGETS, widget('a')), AlreadyExistsError)
  })

  it('seeds objects as given, keeping uid, resourceVersion and status, and writes above them', async () => {
    const cluster = new FakeCluster()
    const seeded = cluster.seed(WIDGETS, {
      ...widget('w'),
      metadata: { name: 'w', namespace: 'ns', uid: 'uid-real', resourceVersion: '120' },
      status: { ready: true },
    })
    assert.equal(seeded.metadata.uid, 'uid-real')
    assert.equal(seeded.metadata.resourceVersion, '120')
    assert.deepEqual(cluster.writes, [], 'seeding is no client call')
    const updated = await cluster.update(WIDGETS, { ...seeded, spec: { size: 2 } })
    assert.equal(updated.metadata.resourceVersion, '121')
    assert.deepEqual(updated['status'], { ready: true })
    const other = cluster.seed(WIDGETS, {
      ...widget('v'),
      metadata: { name: 'v', namespace: 'ns' },
    })
    assert.match(other.metadata.uid ?? '', /^uid-/)
    assert.equal(other.metadata.resourceVersion, '122')
    assert.throws(() => cluster.seed(WIDGETS, widget('')), /without a name and namespace/)
  })

  it('answers NotFound for a missing object on get, update and delete', async () => {
    const cluster = new FakeCluster()
    await assert.rejects(cluster.get(WIDGETS, 'x', { namespace: 'ns' }), NotFoundError)
    await assert.rejects(cluster.update(WIDGETS, widget('x')), NotFoundError)
    await assert.rejects(cluster.delete(WIDGETS, 'x', { namespace: 'ns' }), NotFoundError)
  })

  it('rejects an update with a stale resourceVersion or another uid (409 Conflict)', async () => {
    const cluster = new FakeCluster()
    const created = await cluster.create(WIDGETS, widget('a'))
    const updated = await cluster.update(WIDGETS, { ...created, spec: { size: 2 } })
    await assert.rejects(cluster.update(WIDGETS, { ...created, spec: { size: 3 } }), ConflictError)
    const foreign = { ...updated, metadata: { ...updated.metadata, uid: 'other' } }
    await assert.rejects(cluster.update(WIDGETS, foreign), ConflictError)
    // Without a resourceVersion the write is unconditional.
    const blind = widget('a', { size: 4 })
    assert.deepEqual((await cluster.update(WIDGETS, blind))['spec'], { size: 4 })
  })

  it('bumps generation on spec changes only, and not on a no-op write', async () => {
    const cluster = new FakeCluster()
    const created = await cluster.create(WIDGETS, widget('a'))
    const labelled = await cluster.update(WIDGETS, {
      ...created,
      metadata: { ...created.metadata, labels: { x: 'y' } },
    })
    assert.equal(labelled.metadata.generation, 1)
    const status = await cluster.updateStatus(WIDGETS, { ...labelled, status: { ready: true } })
    assert.equal(status.metadata.generation, 1)
    const resized = await cluster.update(WIDGETS, { ...status, spec: { size: 9 } })
    assert.equal(resized.metadata.generation, 2)
    const same = await cluster.update(WIDGETS, resized)
    assert.equal(same.metadata.resourceVersion, resized.metadata.resourceVersion)
  })

  it('stores empty labels and finalizers as absent, so writing them is no change', async () => {
    const cluster = new FakeCluster()
    const created = await cluster.create(WIDGETS, {
      ...widget('a'),
      metadata: { name: 'a', namespace: 'ns', labels: {}, finalizers: [] },
    })
    assert.equal(created.metadata.labels, undefined)
    const same = await cluster.update(WIDGETS, {
      ...created,
      metadata: { ...created.metadata, annotations: {}, ownerReferences: [] },
    })
    assert.equal(same.metadata.resourceVersion, created.metadata.resourceVersion)
  })

  it('names objects from generateName and stores nothing on a dry run', async () => {
    const cluster = new FakeCluster()
    const generated = await cluster.create(WIDGETS, {
      ...widget(''),
      metadata: { generateName: 'w-', namespace: 'ns' },
    })
    assert.match(generated.metadata.name ?? '', /^w-.{5}$/)
    await cluster.create(WIDGETS, widget('dry'), { dryRun: true })
    assert.equal(cluster.peek(WIDGETS, 'dry', 'ns'), undefined)
  })

  it('keeps status on update and changes only status on updateStatus', async () => {
    const cluster = new FakeCluster()
    const created = await cluster.create(WIDGETS, { ...widget('a'), status: { ignored: 1 } })
    assert.equal(created['status'], undefined, 'create ignores status under the subresource')
    const withStatus = await cluster.updateStatus(WIDGETS, {
      ...created,
      spec: { size: 100 },
      status: { phase: 'Ready' },
    })
    assert.deepEqual(withStatus['spec'], { size: 1 })
    assert.deepEqual(withStatus['status'], { phase: 'Ready' })
    const updated = await cluster.update(WIDGETS, { ...withStatus, status: { phase: 'Lost' } })
    assert.deepEqual(updated['status'], { phase: 'Ready' })
  })

  it('writes status through update when the resource has no status subresource', async () => {
    const cluster = new FakeCluster()
    cluster.defineResource(WIDGETS, { statusSubresource: false })
    const created = await cluster.create(WIDGETS, { ...widget('a'), status: { phase: 'New' } })
    assert.deepEqual(created['status'], { phase: 'New' })
    await assert.rejects(cluster.updateStatus(WIDGETS, created), NotFoundError)
  })

  it('honours delete preconditions', async () => {
    const cluster = new FakeCluster()
    const created = await cluster.create(WIDGETS, widget('a'))
    const options = { namespace: 'ns', preconditions: { uid: 'someone-else' } }
    await assert.rejects(cluster.delete(WIDGETS, 'a', options), ConflictError)
    const uid = created.metadata.uid ?? ''
    await cluster.delete(WIDGETS, 'a', { namespace: 'ns', preconditions: { uid } })
    assert.equal(cluster.peek(WIDGETS, 'a', 'ns'), undefined)
  })

  it('marks an object with finalizers as deleting and removes it with its last finalizer', async () => {
    const cluster = new FakeCluster()
    const created = await cluster.create(WIDGETS, {
      ...widget('a'),
      metadata: { name: 'a', namespace: 'ns', finalizers: ['x', 'y'] },
    })
    await cluster.delete(WIDGETS, 'a', { namespace: 'ns' })
    const deleting = cluster.peek(WIDGETS, 'a', 'ns')
    assert.ok(deleting?.metadata.deletionTimestamp !== undefined)
    assert.equal(deleting.metadata.generation, (created.metadata.generation ?? 0) + 1)
    const added = { ...deleting, metadata: { ...deleting.metadata, finalizers: ['x', 'y', 'z'] } }
    await assert.rejects(cluster.update(WIDGETS, added), InvalidError)
    const one = await cluster.update(WIDGETS, {
      ...deleting,
      metadata: { ...deleting.metadata, finalizers: ['y'] },
    })
    assert.ok(cluster.peek(WIDGETS, 'a', 'ns') !== undefined)
    await cluster.update(WIDGETS, { ...one, metadata: { ...one.metadata, finalizers: [] } })
    assert.equal(cluster.peek(WIDGETS, 'a', 'ns'), undefined)
  })

  it('records writes and fails injected calls once', async () => {
    const cluster = new FakeCluster()
    const boom = fakeApiError('InternalError', 'boom')
    cluster.failNext({ method: 'create', resource: 'widgets', name: 'a' }, boom)
    await assert.rejects(cluster.create(WIDGETS, widget('a')), /boom/)
    await cluster.create(WIDGETS, widget('a'))
    await cluster.get(WIDGETS, 'a', { namespace: 'ns' })
    await cluster.delete(WIDGETS, 'a', { namespace: 'ns', preconditions: { uid: 'uid-1' } })
    assert.deepEqual(
      cluster.writes.map((w) => [w.method, w.name, w.error ?? 'ok']),
      [
        ['create', 'a', 'ApiError'],
        ['create', 'a', 'ok'],
        ['delete', 'a', 'ok'],
      ]
    )
    assert.deepEqual(cluster.writes[2]?.preconditions, { uid: 'uid-1' })
  })

  it('fails every call once closed', async () => {
    const cluster = new FakeCluster()
    await cluster.create(WIDGETS, widget('a'))
    cluster.close()
    await assert.rejects(cluster.get(WIDGETS, 'a', { namespace: 'ns' }), /closed/)
    await assert.rejects(cluster.create(WIDGETS, widget('b')), /closed/)
  })

  it('deletes dependents whose owners are gone when garbage collection is on', async () => {
    const cluster = new FakeCluster({ garbageCollection: true })
    const owner = await cluster.create(WIDGETS, widget('owner'))
    const ownerRef = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      name: 'owner',
      uid: owner.metadata.uid ?? '',
    }
    const dependent = { name: 'cm', namespace: 'ns', ownerReferences: [ownerRef] }
    await cluster.create(CONFIGMAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: dependent })
    await cluster.delete(WIDGETS, 'owner', { namespace: 'ns' })
    assert.deepEqual(cluster.objects(CONFIGMAPS), [])
    assert.deepEqual(
      cluster.writes.map((w) => w.method),
      ['create', 'create', 'delete'],
      'the collector is the server, not a client: its deletes are not client writes'
    )
  })
})

describe('FakeCluster list and watch', () => {
  it('lists in pages from one snapshot', async () => {
    const cluster = new FakeCluster()
    for (const name of ['a', 'b', 'c']) await cluster.create(WIDGETS, widget(name))
    const watcher = cluster.listWatcherFactory()(WIDGETS, {})
    const signal = new AbortController().signal
    const first = await watcher.listPage({ limit: 2, signal })
    await cluster.create(WIDGETS, widget('d'))
    const token = first.metadata.continue
    assert.ok(token !== undefined)
    const second = await watcher.listPage({ limit: 2, continue: token, signal })
    assert.deepEqual(
      [...first.items, ...second.items].map((o) => o.metadata.name),
      ['a', 'b', 'c']
    )
    assert.equal(second.metadata.continue, undefined)
    assert.equal(second.metadata.resourceVersion, first.metadata.resourceVersion)
  })

  it('replays changes after a resourceVersion and delivers new ones', async () => {
    const cluster = new FakeCluster()
    const from = cluster.resourceVersion
    const a = await cluster.create(WIDGETS, widget('a'))
    const events = watchEvents(cluster, from, 3)
    await cluster.update(WIDGETS, { ...a, spec: { size: 2 } })
    await cluster.delete(WIDGETS, 'a', { namespace: 'ns' })
    assert.deepEqual(
      (await events).map((e) => [e.type, e.object.metadata.name]),
      [
        ['ADDED', 'a'],
        ['MODIFIED', 'a'],
        ['DELETED', 'a'],
      ]
    )
  })

  it('turns objects entering and leaving a label scope into ADDED and DELETED', async () => {
    const cluster = new FakeCluster()
    const from = cluster.resourceVersion
    const a = await cluster.create(WIDGETS, widget('a'))
    const inScope = await cluster.update(WIDGETS, {
      ...a,
      metadata: { ...a.metadata, labels: { team: 'x' } },
    })
    await cluster.update(WIDGETS, { ...inScope, metadata: { ...inScope.metadata, labels: {} } })
    const events = await watchEvents(cluster, from, 2, 'team=x')
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'DELETED']
    )
  })

  it('answers a watch from a compacted resourceVersion with a 410 ERROR event', async () => {
    const cluster = new FakeCluster()
    const from = cluster.resourceVersion
    await cluster.create(WIDGETS, widget('a'))
    cluster.compact()
    const [event] = await watchEvents(cluster, from, 1)
    assert.equal(event?.type, 'ERROR')
    assert.equal(event.object['code'], 410)
  })

  it('keeps real informers current, and settle() waits for their delivery', async () => {
    const cluster = new FakeCluster()
    await cluster.create(WIDGETS, widget('a'))
    const informers = new SharedInformers(cluster.listWatcherFactory(), { clock: new FakeClock() })
    const lease = informers.acquire(WIDGETS)
    const seen: string[] = []
    lease.informer.subscribe({
      onAdd: (o) => seen.push(`add ${o.metadata.name ?? ''}`),
      onUpdate: (_old, o) => seen.push(`update ${o.metadata.name ?? ''}`),
      onDelete: (o) => seen.push(`delete ${o.metadata.name ?? ''}`),
    })
    await lease.informer.waitForSync()
    const b = await cluster.create(WIDGETS, widget('b'))
    await cluster.update(WIDGETS, { ...b, spec: { size: 5 } })
    await cluster.delete(WIDGETS, 'a', { namespace: 'ns' })
    await cluster.settle()
    assert.deepEqual(seen, ['add a', 'add b', 'update b', 'delete a'])
    assert.deepEqual(lease.informer.store.get('ns/b')?.['spec'], { size: 5 })
    cluster.closeWatches()
    await cluster.create(WIDGETS, widget('c'))
    await cluster.settle()
    assert.ok(lease.informer.store.get('ns/c') !== undefined, 'the informer watched again')
    await lease.release()
  })
})
