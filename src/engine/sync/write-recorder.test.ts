import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import { FakeCluster } from '../../in-memory/fake-cluster.js'
import { summarizeWrites, WriteRecorder, writeKey } from './write-recorder.js'

const CONFIGMAPS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'configmaps',
  namespaced: true,
}
const GADGETS: ResourceRef = {
  group: 'example.com',
  version: 'v1',
  resource: 'gadgets',
  namespaced: true,
}

function configMap(name: string, data: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' }, data }
}

describe('WriteRecorder', () => {
  it('records writes in call order with what was sent and answered, and passes reads through', async () => {
    const cluster = new FakeCluster()
    const recorder = new WriteRecorder(cluster)
    const created = await recorder.create(CONFIGMAPS, configMap('a'))
    await recorder.get(CONFIGMAPS, 'a', { namespace: 'ns' })
    await recorder.update(CONFIGMAPS, { ...created, data: { k: 'v' } })
    await recorder.delete(CONFIGMAPS, 'a', { namespace: 'ns' })
    const writes = recorder.writes
    assert.deepEqual(
      writes.map((w) => `${w.method} ${writeKey(w)}`),
      ['create configmaps ns/a', 'update configmaps ns/a', 'delete configmaps ns/a']
    )
    assert.equal(writes[0]?.sent?.metadata.uid, undefined, 'the object as sent')
    assert.equal(writes[0]?.result?.metadata.uid, created.metadata.uid, 'the answer')
    assert.deepEqual(writes[1]?.sent?.['data'], { k: 'v' })
    assert.equal(cluster.peek(CONFIGMAPS, 'a', 'ns'), undefined, 'the writes reached the cluster')
  })

  it('keeps a failed write with its error, and still rejects', async () => {
    const recorder = new WriteRecorder(new FakeCluster())
    await assert.rejects(recorder.update(CONFIGMAPS, configMap('missing')), /not found/)
    await assert.rejects(recorder.delete(CONFIGMAPS, 'missing', { namespace: 'ns' }), /not found/)
    assert.deepEqual(
      recorder.writes.map((w) => [w.method, (w.error as Error).name]),
      [
        ['update', 'NotFoundError'],
        ['delete', 'NotFoundError'],
      ]
    )
  })

  it('gives the writes after a mark, and forgets them on clear', async () => {
    const recorder = new WriteRecorder(new FakeCluster())
    await recorder.create(CONFIGMAPS, configMap('a'))
    const mark = recorder.mark()
    await recorder.create(CONFIGMAPS, configMap('b'))
    assert.deepEqual(
      recorder.since(mark).map((w) => w.name),
      ['b']
    )
    recorder.clear()
    assert.deepEqual(recorder.writes, [])
  })
})

describe('summarizeWrites', () => {
  it('tells children created, updated, deleted, unchanged and failed from parent writes', async () => {
    const cluster = new FakeCluster()
    const parent = await cluster.create(GADGETS, {
      apiVersion: 'example.com/v1',
      kind: 'Gadget',
      metadata: { name: 'g', namespace: 'ns' },
    })
    const kept = await cluster.create(CONFIGMAPS, configMap('kept'))
    const changed = await cluster.create(CONFIGMAPS, configMap('changed'))
    await cluster.create(CONFIGMAPS, configMap('gone'))
    const recorder = new WriteRecorder(cluster)
    await recorder.update(GADGETS, {
      ...parent,
      metadata: { ...parent.metadata, finalizers: ['f'] },
    })
    await recorder.create(CONFIGMAPS, configMap('new'))
    await recorder.update(CONFIGMAPS, { ...changed, data: { k: 'v' } })
    await recorder.delete(CONFIGMAPS, 'gone', { namespace: 'ns' })
    await assert.rejects(recorder.create(CONFIGMAPS, configMap('kept')))
    const fresh = await cluster.get(GADGETS, 'g', { namespace: 'ns' })
    await recorder.updateStatus(GADGETS, { ...fresh, status: { ready: true } })
    const summary = summarizeWrites(recorder.writes, { ref: GADGETS, namespace: 'ns', name: 'g' }, [
      'configmaps ns/kept',
      'configmaps ns/changed',
      'configmaps ns/gone',
      'configmaps ns/other',
    ])
    assert.deepEqual(summary.created, ['configmaps ns/new'])
    assert.deepEqual(summary.updated, ['configmaps ns/changed'])
    assert.deepEqual(summary.deleted, ['configmaps ns/gone'])
    assert.deepEqual(summary.unchanged, ['configmaps ns/other'])
    assert.deepEqual(
      summary.failed.map((f) => f.key),
      [writeKey({ ref: CONFIGMAPS, namespace: 'ns', name: kept.metadata.name ?? '' })]
    )
    assert.match(summary.failed[0]?.error ?? '', /already exists/)
    assert.equal(summary.parentUpdated, true)
    assert.equal(summary.statusWritten, true)
  })
})
