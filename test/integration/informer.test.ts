// Proves the informer against a real API server in the two ways informers in other ecosystems
// have failed: a kube-apiserver restart (the watch must resume with nothing missed or doubled) and
// etcd compaction (a too-old resourceVersion must lead to a relist whose cache equals a fresh list).
// Each starts its own control plane, because both disturb the server.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { request } from 'undici'
import type { KubeObject } from '../../src/core/kube-object.js'
import { DynamicClient } from '../../src/kube/dynamic-client.js'
import { KubeTransport } from '../../src/kube/kube-transport.js'
import { GoneError } from '../../src/kube/api-error.js'
import { Informer, WatchStatusError } from '../../src/runtime/informers/informer.js'
import { dynamicListWatcher } from '../../src/runtime/informers/list-watcher.js'
import type { ListWatcher } from '../../src/runtime/informers/list-watcher.js'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { CONFIGMAPS, NAMESPACES } from '../../src/kube/well-known-resources.js'

const NS = 'informer-test'

type Recorded = readonly [string, string]

function record(informer: Informer): Recorded[] {
  const events: Recorded[] = []
  informer.subscribe({
    onAdd: (o) => events.push(['add', o.metadata.name ?? '']),
    onUpdate: (_old, o) => events.push(['update', o.metadata.name ?? '']),
    onDelete: (o) => events.push(['delete', o.metadata.name ?? '']),
  })
  return events
}

function configMap(name: string, value: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data: { value } }
}

async function freshState(client: DynamicClient): Promise<[string, string][]> {
  const list = await client.list(CONFIGMAPS, { namespace: NS })
  return list.items
    .map((o): [string, string] => [o.metadata.name ?? '', o.metadata.resourceVersion ?? ''])
    .sort()
}

function cacheState(informer: Informer): [string, string][] {
  return informer.store
    .list()
    .map((o): [string, string] => [o.metadata.name ?? '', o.metadata.resourceVersion ?? ''])
    .sort()
}

async function setUp(
  apiServerFlags: string[] = []
): Promise<{ plane: ControlPlane; client: DynamicClient; transport: KubeTransport }> {
  // No nodes: only the API server matters here, and the smaller plane starts faster.
  const plane = await startControlPlane({ useExistingCluster: false, nodes: 0, apiServerFlags })
  await plane.client.create(NAMESPACES, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: NS },
  })
  const transport = new KubeTransport(plane.config)
  return { plane, client: new DynamicClient(transport), transport }
}

describe('informer across a kube-apiserver restart', () => {
  let plane: ControlPlane
  let client: DynamicClient
  let transport: KubeTransport
  let informer: Informer

  before(async () => {
    ;({ plane, client, transport } = await setUp())
    informer = new Informer(dynamicListWatcher(client, CONFIGMAPS, { namespace: NS }), {
      // Retry quickly while the server is down, so the test does not wait out long backoffs.
      backoff: { baseMs: 200, maxMs: 1000 },
    })
  })

  after(async () => {
    await informer.stop()
    await transport.close()
    await plane.stop()
  })

  it('resumes the watch with no missed or duplicated events', async () => {
    await plane.client.create(CONFIGMAPS, configMap('a', '1'))
    await plane.client.create(CONFIGMAPS, configMap('b', '1'))
    const events = record(informer)
    informer.start()
    await informer.waitForSync()
    await plane.client.create(CONFIGMAPS, configMap('c', '1'))
    await waitFor(() => informer.store.get(`${NS}/c`))

    await plane.restartApiServer()

    const a = await plane.client.get(CONFIGMAPS, 'a', { namespace: NS })
    await plane.client.update(CONFIGMAPS, { ...a, data: { value: '2' } })
    await plane.client.delete(CONFIGMAPS, 'b', { namespace: NS })
    await plane.client.create(CONFIGMAPS, configMap('d', '1'))
    const expected = await freshState(plane.client)
    await waitFor(() => JSON.stringify(cacheState(informer)) === JSON.stringify(expected), {
      timeoutMs: 30_000,
      description: 'the informer cache to match a fresh list after the restart',
    })
    assert.deepEqual(events, [
      ['add', 'a'],
      ['add', 'b'],
      ['add', 'c'],
      ['update', 'a'],
      ['delete', 'b'],
      ['add', 'd'],
    ])
    assert.ok(informer.watchRestarts >= 1, 'the watch was restarted')
  })

  it('relists a quiet informer at once on the 410 after each of two restarts', async () => {
    // A namespace nobody writes to: its informer's resourceVersion only moves when it relists, so
    // after a restart its watch is too old for the new watch cache and gets a 410. Before the fix
    // the second restart's 410 counted as a repeat of the first (no watch event came between)
    // and waited out the 410 backoff, reported to the observer as an error with a delay.
    const quiet = `${NS}-quiet`
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: quiet },
    })
    const lifecycle: string[] = []
    const delayedErrors: unknown[] = []
    const quietInformer = new Informer(
      dynamicListWatcher(client, CONFIGMAPS, { namespace: quiet }),
      {
        backoff: { baseMs: 200, maxMs: 1000 },
        observer: {
          onRelist: (_description, reason) => lifecycle.push(`relist ${reason}`),
          onError: (_description, error) => delayedErrors.push(error),
        },
      }
    )
    try {
      quietInformer.start()
      await quietInformer.waitForSync()
      for (const round of [1, 2]) {
        // Writes elsewhere move the cluster's resourceVersion past the quiet informer's.
        for (let i = 0; i < 3; i++)
          await plane.client.create(CONFIGMAPS, configMap(`q${round}-${i}`, '1'))
        await plane.restartApiServer()
        await waitFor(() => lifecycle.filter((l) => l === 'relist gone').length === round, {
          timeoutMs: 30_000,
          intervalMs: 50,
          description: `the quiet informer to relist on the 410 after restart ${round}`,
        })
      }
      assert.deepEqual(lifecycle, ['relist initial', 'relist gone', 'relist gone'])
      assert.deepEqual(
        delayedErrors.filter((e) => e instanceof GoneError || e instanceof WatchStatusError),
        [],
        'no 410 waited for the backoff'
      )
    } finally {
      await quietInformer.stop()
    }
  })
})

/** Wraps a ListWatcher so a test can cut the watch and hold the informer off the server. */
function gated(inner: ListWatcher): ListWatcher & { cut(): void; open(): void } {
  let current: AbortController | undefined
  let gate: Promise<void> = Promise.resolve()
  let release = (): void => undefined
  return {
    description: inner.description,
    listPage: (options) => inner.listPage(options),
    watch: async (options) => {
      await gate
      const controller = new AbortController()
      current = controller
      return inner.watch({
        ...options,
        signal: AbortSignal.any([options.signal, controller.signal]),
      })
    },
    cut: () => {
      gate = new Promise((resolve) => {
        release = resolve
      })
      current?.abort(new Error('cut by test'))
    },
    open: () => {
      release()
    },
  }
}

async function etcdRevision(etcdUrl: string): Promise<number> {
  const res = await request(`${etcdUrl}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from('/').toString('base64') }),
  })
  const body = (await res.body.json()) as { header: { revision: string } }
  return Number(body.header.revision)
}

async function compactEtcd(etcdUrl: string, revision: number): Promise<void> {
  const res = await request(`${etcdUrl}/v3/kv/compaction`, {
    method: 'POST',
    body: JSON.stringify({ revision: String(revision), physical: true }),
  })
  assert.equal(res.statusCode, 200, await res.body.text())
}

describe('informer after etcd compaction', () => {
  let plane: ControlPlane
  let client: DynamicClient
  let transport: KubeTransport

  before(async () => {
    // Without the watch cache the apiserver serves watches from etcd, so a compacted
    // resourceVersion really is too old (the cache would otherwise still hold it).
    ;({ plane, client, transport } = await setUp(['--watch-cache=false']))
  })

  after(async () => {
    await transport.close()
    await plane.stop()
  })

  it('relists after a too-old resourceVersion and its cache equals a fresh list', async () => {
    for (const name of ['keep', 'change', 'remove'])
      await plane.client.create(CONFIGMAPS, configMap(name, '1'))
    const source = gated(dynamicListWatcher(client, CONFIGMAPS, { namespace: NS }))
    const informer = new Informer(source, { backoff: { baseMs: 50, maxMs: 200 } })
    const events = record(informer)
    try {
      informer.start()
      await informer.waitForSync()
      assert.equal(informer.relists, 1)

      source.cut()
      const change = await plane.client.get(CONFIGMAPS, 'change', { namespace: NS })
      await plane.client.update(CONFIGMAPS, { ...change, data: { value: '2' } })
      await plane.client.delete(CONFIGMAPS, 'remove', { namespace: NS })
      await plane.client.create(CONFIGMAPS, configMap('new', '1'))
      const etcdUrl = plane.etcdUrl
      assert.ok(etcdUrl)
      await compactEtcd(etcdUrl, await etcdRevision(etcdUrl))
      source.open()

      const expected = await freshState(plane.client)
      await waitFor(
        () =>
          informer.relists === 2 &&
          JSON.stringify(cacheState(informer)) === JSON.stringify(expected),
        {
          timeoutMs: 30_000,
          description: 'a relist whose cache equals a fresh list',
        }
      )
      assert.deepEqual(events.slice(3).sort(), [
        ['add', 'new'],
        ['delete', 'remove'],
        ['update', 'change'],
      ])
      assert.deepEqual(
        events.slice(0, 3).map((e) => e[0]),
        ['add', 'add', 'add']
      )
    } finally {
      await informer.stop()
    }
  })
})
