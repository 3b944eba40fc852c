import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { DynamicClient } from '../../kube/dynamic-client.js'
import { KubeTransport } from '../../kube/kube-transport.js'
import { CONFIGMAPS } from '../../kube/well-known-resources.js'
import { describeCollection, dynamicListWatcher } from './list-watcher.js'
import type { WatchEvent } from '../../kube/watch-event.js'

// Multi-byte characters make bytes and characters differ, so a count of characters would fail.
const LIST = JSON.stringify({
  apiVersion: 'v1',
  kind: 'ConfigMapList',
  metadata: { resourceVersion: '7' },
  items: [
    { metadata: { name: 'a', namespace: 'ns' }, data: { greeting: 'grüße, ça va' } },
    { metadata: { name: 'b', namespace: 'ns' }, data: { emoji: '🙂'.repeat(50) } },
  ],
})
const EVENTS = [
  { type: 'ADDED', object: { kind: 'ConfigMap', metadata: { name: 'c' }, data: { x: 'é' } } },
  { type: 'BOOKMARK', object: { kind: 'ConfigMap', metadata: { resourceVersion: '9' } } },
  { type: 'DELETED', object: { kind: 'ConfigMap', metadata: { name: 'a' } } },
]
  .map((event) => `${JSON.stringify(event)}\n`)
  .join('')

/** Writes `body` in three chunks cut mid-character, flushing between them. */
async function writeInPieces(res: ServerResponse, body: string): Promise<void> {
  const bytes = Buffer.from(body)
  const cuts = [0, 37, Math.floor(bytes.length / 2) + 1, bytes.length]
  for (let i = 1; i < cuts.length; i++) {
    res.write(bytes.subarray(cuts[i - 1], cuts[i]))
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  res.end()
}

describe('dynamicListWatcher', () => {
  let transport: KubeTransport
  let close: () => Promise<void>
  const queries: URLSearchParams[] = []

  before(async () => {
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      const query = new URL(req.url ?? '', 'http://x').searchParams
      queries.push(query)
      const watching = query.get('watch') === 'true'
      void writeInPieces(res, watching ? EVENTS : LIST)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    transport = new KubeTransport({
      server: `http://127.0.0.1:${port}`,
      auth: { type: 'none' },
      namespace: 'default',
      source: 'test',
    })
    close = () =>
      new Promise((resolve) => {
        server.close(() => {
          resolve()
        })
      })
  })
  after(async () => {
    await transport.close()
    await close()
  })

  it('tells the bytes of a list page and of a watch stream as received, not as decoded', async () => {
    const lw = dynamicListWatcher(new DynamicClient(transport), CONFIGMAPS, { namespace: 'ns' })
    const signal = new AbortController().signal
    const listed: number[] = []
    const list = await lw.listPage({ limit: 500, signal, onBytes: (n) => listed.push(n) })
    assert.deepEqual(
      list.items.map((i) => i.metadata.name),
      ['a', 'b']
    )
    assert.deepEqual(listed, [Buffer.byteLength(LIST)], 'one count per page, in bytes')

    const watched: number[] = []
    const stream = await lw.watch({
      resourceVersion: '7',
      timeoutSeconds: 60,
      signal,
      onBytes: (n) => watched.push(n),
    })
    const events: WatchEvent[] = []
    for await (const event of stream) events.push(event)
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'BOOKMARK', 'DELETED']
    )
    assert.ok(watched.length >= 2, 'counted chunk by chunk')
    assert.equal(
      watched.reduce((a, b) => a + b, 0),
      Buffer.byteLength(EVENTS)
    )
  })

  it('asks for a streaming initial list as KEP-3157 says, with no resourceVersion', async () => {
    const lw = dynamicListWatcher(new DynamicClient(transport), CONFIGMAPS, {
      namespace: 'ns',
      labelSelector: 'app=web',
    })
    assert.ok(lw.watchList !== undefined)
    queries.length = 0
    const stream = await lw.watchList({ timeoutSeconds: 60, signal: new AbortController().signal })
    const events: WatchEvent[] = []
    for await (const event of stream) events.push(event)
    assert.equal(events.length, 3)
    assert.deepEqual(Object.fromEntries(queries[0] ?? []), {
      watch: 'true',
      labelSelector: 'app=web',
      allowWatchBookmarks: 'true',
      timeoutSeconds: '60',
      sendInitialEvents: 'true',
      resourceVersionMatch: 'NotOlderThan',
    })
  })

  it('reads as before when no one asks for the bytes', async () => {
    const lw = dynamicListWatcher(new DynamicClient(transport), CONFIGMAPS, { namespace: 'ns' })
    const list = await lw.listPage({ limit: 500, signal: new AbortController().signal })
    const data = list.items[1]?.['data'] as { emoji?: string } | undefined
    assert.equal(data?.emoji, '🙂'.repeat(50))
  })

  it('describes a collection by resource, namespace and selectors, shard selector aside', () => {
    assert.equal(
      describeCollection(CONFIGMAPS, {
        namespace: 'ns',
        labelSelector: 'app=web',
        fieldSelector: 'metadata.name=a',
        shardSelector: "shardRange(object.metadata.uid, '0x0', '0x8')",
      }),
      'configmaps.v1 in ns (app=web) [metadata.name=a]'
    )
  })
})
