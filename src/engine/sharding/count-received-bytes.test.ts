import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeList } from '../../core/kube-object.js'
import type { DynamicClient, ResourceRef } from '../../kube/dynamic-client.js'
import type { WatchEvent } from '../../kube/watch-event.js'
import type { ListWatcher } from '../../runtime/informers/list-watcher.js'
import { countReceivedBytes } from './count-received-bytes.js'
import type { ShardedWatches } from './parent-shard.js'

const PARENTS: ResourceRef = {
  group: 'example.com',
  version: 'v1',
  resource: 'shps',
  namespaced: true,
}
const EMPTY: KubeList = { apiVersion: 'v1', kind: 'List', metadata: {}, items: [] }

/** Sharded watches whose list-watchers report fixed byte counts: 100 per page, 7 and 9 per watch. */
function watches(): ShardedWatches & { readonly clients: unknown[] } {
  const clients: unknown[] = []
  const source: ListWatcher = {
    description: 'shps.v1.example.com {shard namespace}',
    listPage: (page) => {
      page.onBytes?.(100)
      return Promise.resolve(EMPTY)
    },
    watch: (watch) => {
      watch.onBytes?.(7)
      watch.onBytes?.(9)
      return Promise.resolve(noEvents())
    },
  }
  return {
    clients,
    shardsChildren: (ref) => ref.resource === 'configmaps',
    listWatchers: (client) => {
      clients.push(client)
      return () => source
    },
  }
}

/** A watch stream that ends at once. */
async function* noEvents(): AsyncGenerator<WatchEvent> {
  // Nothing happens on this watch.
}

describe('countReceivedBytes', () => {
  it('counts every page and watch chunk under the collection name of the other shard metrics', async () => {
    const inner = watches()
    const counts: [string, number][] = []
    const counted = countReceivedBytes(inner, (collection, bytes) =>
      counts.push([collection, bytes])
    )
    const client = Object.create(null) as DynamicClient
    const lw = counted.listWatchers(client)(PARENTS, { namespace: 'ns' })
    const signal = new AbortController().signal
    await lw.listPage({ limit: 500, signal })
    await lw.watch({ resourceVersion: '1', timeoutSeconds: 60, signal })
    assert.deepEqual(counts, [
      ['shps.v1.example.com in ns', 100],
      ['shps.v1.example.com in ns', 7],
      ['shps.v1.example.com in ns', 9],
    ])
    assert.equal(lw.description, 'shps.v1.example.com {shard namespace}')
    assert.deepEqual(inner.clients, [client], 'the engine’s client is handed on')
    assert.equal(counted.shardsChildren({ ...PARENTS, resource: 'configmaps' }), true)
    assert.equal(counted.shardsChildren(PARENTS), false)
  })
})
