// Streaming initial lists (KEP-3157 WatchList) against the real API server: with the WatchList
// gate on (the tier's plane; on by default in v1.37) an informer fills its cache from one watch
// and never lists; with the gate off (a plane of this file's own) the server answers 422 and the
// informer falls back to list and watch. Either way, its cache and the changes it tells equal a
// list-and-watch informer's, for writes during and after the initial sync.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import { DynamicClient } from '../../src/kube/dynamic-client.js'
import { KubeTransport } from '../../src/kube/kube-transport.js'
import { CONFIGMAPS, NAMESPACES } from '../../src/kube/well-known-resources.js'
import { Informer } from '../../src/runtime/informers/informer.js'
import { dynamicListWatcher } from '../../src/runtime/informers/list-watcher.js'
import type { ListWatcher } from '../../src/runtime/informers/list-watcher.js'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'

/** A list-watcher that counts the calls of each kind it serves. */
function counting(inner: ListWatcher): ListWatcher & { readonly calls: Map<string, number> } {
  const calls = new Map<string, number>()
  const count = (kind: string): void => {
    calls.set(kind, (calls.get(kind) ?? 0) + 1)
  }
  return {
    calls,
    description: inner.description,
    listPage: (options) => {
      count('list')
      return inner.listPage(options)
    },
    watch: (options) => {
      count('watch')
      return inner.watch(options)
    },
    ...(inner.watchList === undefined
      ? {}
      : {
          watchList: (options) => {
            count('watchList')
            return inner.watchList?.(options) ?? Promise.reject(new Error('no watchList'))
          },
        }),
  }
}

/** `name=value` of each cached ConfigMap, sorted. */
function contents(objects: readonly KubeObject[]): string[] {
  return objects
    .map((o) => `${o.metadata.name ?? ''}=${String((o['data'] as { v?: string } | undefined)?.v)}`)
    .sort()
}

/** Folds told changes into the state they describe, as a subscriber's own copy would be. */
function follow(informer: Informer): { state: Map<string, string>; after: string[] } {
  const state = new Map<string, string>()
  const after: string[] = []
  const value = (o: KubeObject): string => String((o['data'] as { v?: string } | undefined)?.v)
  informer.subscribe({
    onAdd: (o) => {
      state.set(o.metadata.name ?? '', value(o))
      after.push(`add ${o.metadata.name ?? ''}=${value(o)}`)
    },
    onUpdate: (_old, o) => {
      state.set(o.metadata.name ?? '', value(o))
      after.push(`update ${o.metadata.name ?? ''}=${value(o)}`)
    },
    onDelete: (o) => {
      state.delete(o.metadata.name ?? '')
      after.push(`delete ${o.metadata.name ?? ''}`)
    },
  })
  return { state, after }
}

function configMap(ns: string, name: string, v: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { v } }
}

/** Waits until every informer's cache equals a fresh list of `ns`; returns that list. */
async function caughtUp(plane: ControlPlane, ns: string, informers: Informer[]): Promise<string[]> {
  const fresh = contents((await plane.client.list(CONFIGMAPS, { namespace: ns })).items)
  for (const informer of informers) {
    await waitFor(() => JSON.stringify(contents(informer.store.list())) === JSON.stringify(fresh), {
      timeoutMs: 30_000,
      description: `the cache of ${informer.description} to equal a fresh list`,
    })
  }
  return fresh
}

/**
 * Runs a streaming informer and a listing one side by side over `ns` while ConfigMaps are
 * created, updated and deleted during and after their initial sync; checks both against a fresh
 * list and each other, and returns the streaming one's calls and fallbacks.
 */
async function sideBySide(
  plane: ControlPlane,
  ns: string
): Promise<{ calls: Map<string, number>; fallbacks: number }> {
  await plane.client.create(NAMESPACES, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: ns },
  })
  for (let i = 0; i < 40; i++) await plane.client.create(CONFIGMAPS, configMap(ns, `cm-${i}`, '1'))
  const transport = new KubeTransport(plane.config)
  const client = new DynamicClient(transport)
  const streamingSource = counting(dynamicListWatcher(client, CONFIGMAPS, { namespace: ns }))
  let fallbacks = 0
  const streaming = new Informer(streamingSource, {
    observer: { onWatchListFallback: () => fallbacks++ },
  })
  const listing = new Informer(dynamicListWatcher(client, CONFIGMAPS, { namespace: ns }), {
    watchList: false,
  })
  const told = { streaming: follow(streaming), listing: follow(listing) }
  const seen = [told.streaming, told.listing]
  try {
    streaming.start()
    listing.start()
    // Writes racing the initial sync: some land in the snapshot, some come as watch events.
    for (let i = 0; i < 10; i++) {
      await plane.client.create(CONFIGMAPS, configMap(ns, `during-${i}`, '1'))
      await plane.client.delete(CONFIGMAPS, `cm-${i}`, { namespace: ns })
      const cm = await plane.client.get(CONFIGMAPS, `cm-${20 + i}`, { namespace: ns })
      await plane.client.update(CONFIGMAPS, { ...cm, data: { v: '2' } })
    }
    await Promise.all([streaming.waitForSync(), listing.waitForSync()])
    await caughtUp(plane, ns, [streaming, listing])
    // Both synced and caught up: from here on both must tell exactly the same changes.
    for (const s of seen) s.after.length = 0
    await plane.client.create(CONFIGMAPS, configMap(ns, 'after', '1'))
    const cm = await plane.client.get(CONFIGMAPS, 'cm-39', { namespace: ns })
    await plane.client.update(CONFIGMAPS, { ...cm, data: { v: '3' } })
    await plane.client.delete(CONFIGMAPS, 'cm-38', { namespace: ns })
    const fresh = await caughtUp(plane, ns, [streaming, listing])
    for (const s of seen) {
      assert.deepEqual([...s.state].map(([k, v]) => `${k}=${v}`).sort(), fresh, 'told = cached')
    }
    assert.deepEqual(told.streaming.after, ['add after=1', 'update cm-39=3', 'delete cm-38'])
    assert.deepEqual(told.streaming.after, told.listing.after)
    return { calls: streamingSource.calls, fallbacks }
  } finally {
    await Promise.all([streaming.stop(), listing.stop()])
    await transport.close()
  }
}

describe('informer with streaming initial lists, WatchList gate on', () => {
  let plane: ControlPlane

  before(async () => {
    plane = await startControlPlane({ nodes: 0 })
  })

  after(async () => {
    await plane.stop()
  })

  it('syncs from one watch, never lists, and matches list and watch', async () => {
    const { calls, fallbacks } = await sideBySide(plane, 'watchlist-on')
    assert.equal(fallbacks, 0)
    assert.equal(calls.get('list'), undefined, 'no list call')
    assert.equal(calls.get('watchList'), 1)
  })
})

describe('informer with streaming initial lists, WatchList gate off', () => {
  let plane: ControlPlane

  before(async () => {
    plane = await startControlPlane({
      useExistingCluster: false,
      nodes: 0,
      featureGates: { WatchList: false },
    })
  })

  after(async () => {
    await plane.stop()
  })

  it('falls back to list and watch on the 422 and matches list and watch', async () => {
    const { calls, fallbacks } = await sideBySide(plane, 'watchlist-off')
    assert.equal(fallbacks, 1)
    assert.equal(calls.get('watchList'), 1, 'asked once')
    assert.ok((calls.get('list') ?? 0) >= 1, 'then listed')
  })
})
