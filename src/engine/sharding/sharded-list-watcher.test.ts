import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeList, KubeObject } from '../../core/kube-object.js'
import type { WatchEvent } from '../../kube/watch-event.js'
import type { ListWatcher } from '../../runtime/informers/list-watcher.js'
import { HashRing } from '../../runtime/ring/hash-ring.js'
import { objectInRanges } from '../../runtime/ring/shard-selector.js'
import { ShardSelection } from './shard-selection.js'
import { shardedListWatcher } from './sharded-list-watcher.js'
import { settle } from '../../../test/support/event-loop-turns.js'

const objects: KubeObject[] = Array.from({ length: 40 }, (_, i) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: `o${i}`, namespace: 'ns', uid: `uid-${i}`, resourceVersion: String(i) },
}))

/** A server double: honours the selector (filters by the ranges served at the call) or not. */
function server(selection: ShardSelection, honours: boolean) {
  const selectors: (string | undefined)[] = []
  const pushes: ((event: WatchEvent) => void)[] = []
  const source = (shardSelector?: string): ListWatcher => ({
    description: 'configmaps.v1 in ns',
    listPage: () => {
      selectors.push(shardSelector)
      const ranges = selection.ranges ?? []
      const items = objects.filter(
        (o) => !honours || shardSelector === undefined || objectInRanges('uid', o.metadata, ranges)
      )
      return Promise.resolve({
        apiVersion: 'v1',
        kind: 'ConfigMapList',
        metadata: { resourceVersion: '100' },
        items,
      } as KubeList)
    },
    watch: () => stream([]),
    watchList: () => {
      selectors.push(shardSelector)
      const ranges = selection.ranges ?? []
      const initial = objects
        .filter(
          (o) =>
            !honours || shardSelector === undefined || objectInRanges('uid', o.metadata, ranges)
        )
        .map((object): WatchEvent => ({ type: 'ADDED', object }))
      const end: WatchEvent = {
        type: 'BOOKMARK',
        object: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            resourceVersion: '100',
            annotations: { 'k8s.io/initial-events-end': 'true' },
          },
        },
      }
      return stream([...initial, end])
    },
  })
  // A watch stream that first sends `queued`, then what the test pushes.
  const stream = (queued: WatchEvent[]): Promise<AsyncIterable<WatchEvent>> => {
    const queue: WatchEvent[] = [...queued]
    let wake: () => void = () => undefined
    pushes.push((event) => {
      queue.push(event)
      wake()
    })
    async function* events(): AsyncGenerator<WatchEvent> {
      for (;;) {
        const event = queue.shift()
        if (event !== undefined) yield event
        else await new Promise<void>((resolve) => (wake = resolve))
      }
    }
    return Promise.resolve(events())
  }
  return { source, selectors, pushes }
}

/** The next event of a watch; undefined once it ended. */
async function next(events: AsyncIterator<WatchEvent>): Promise<WatchEvent | undefined> {
  const step = await events.next()
  return step.done === true ? undefined : step.value
}

const ring = new HashRing(['a', 'b'])
const signal = new AbortController().signal

/** A watch stream that ends at once. */
async function* noEvents(): AsyncGenerator<WatchEvent> {
  // Nothing happens on this watch.
}

describe('shardedListWatcher', () => {
  it('lists only after the first ring, with its selector, and relists when the ranges change', async () => {
    const selection = new ShardSelection('uid')
    const fake = server(selection, true)
    const fallbacks: string[] = []
    const held: number[] = []
    const lw = shardedListWatcher({
      source: fake.source,
      selection,
      onFallback: (collection) => fallbacks.push(collection),
      onHeld: (_collection, count) => held.push(count),
    })
    let settled = false
    const listing = lw.listPage({ limit: 500, signal }).finally(() => (settled = true))
    await settle()
    assert.equal(settled, false, 'listed before a ring was served')
    selection.serve(ring.rangesOf('a'))
    const listed = await listing
    assert.equal(fake.selectors[0], selection.selector)
    const mine = objects.filter((o) => objectInRanges('uid', o.metadata, ring.rangesOf('a')))
    assert.ok(mine.length > 0 && mine.length < objects.length)
    assert.equal(listed.items.length, mine.length)
    assert.deepEqual(held, [mine.length], 'the cache holds this replica’s share')

    const events = (await lw.watch({ resourceVersion: '100', timeoutSeconds: 60, signal }))[
      Symbol.asyncIterator
    ]()
    fake.pushes[0]?.({ type: 'MODIFIED', object: mine[0] ?? assert.fail() })
    assert.equal((await next(events))?.type, 'MODIFIED')
    // The same ring again changes nothing; a new one ends the watch with a 410.
    selection.serve(ring.rangesOf('a'))
    selection.serve(new HashRing(['a']).rangesOf('a'))
    const gone = await next(events)
    assert.equal(gone?.type, 'ERROR')
    assert.equal(gone.object['code'], 410)
    assert.equal(await next(events), undefined)
    const relisted = await lw.listPage({ limit: 500, signal })
    assert.equal(relisted.items.length, objects.length, 'the relist selects the new ranges')
    assert.deepEqual(fallbacks, [])
  })

  it('falls back to whole lists once an object outside the ranges arrives, and says so once', async () => {
    const selection = new ShardSelection('uid')
    selection.serve(ring.rangesOf('b'))
    const fake = server(selection, false)
    const fallbacks: string[] = []
    const lw = shardedListWatcher({
      source: fake.source,
      selection,
      onFallback: (collection) => fallbacks.push(collection),
    })
    const first = await lw.listPage({ limit: 500, signal })
    assert.equal(first.items.length, objects.length, 'nothing the server sent is dropped')
    assert.deepEqual(fallbacks, ['configmaps.v1 in ns'])
    const events = (await lw.watch({ resourceVersion: '100', timeoutSeconds: 60, signal }))[
      Symbol.asyncIterator
    ]()
    selection.serve(ring.rangesOf('b').slice(1))
    fake.pushes[0]?.({ type: 'ADDED', object: objects[0] ?? assert.fail() })
    assert.equal((await next(events))?.type, 'ADDED', 'no relist without a shard filter')
    await lw.listPage({ limit: 500, signal })
    assert.equal(fake.selectors.at(-1), undefined, 'later lists carry no selector')
    assert.equal(fallbacks.length, 1)
  })

  it('hands each call’s byte counter on to the list-watcher that answers it, selected or whole', async () => {
    const selection = new ShardSelection('uid')
    selection.serve(ring.rangesOf('a'))
    const told: string[] = []
    const source = (shardSelector?: string): ListWatcher => {
      const who = shardSelector === undefined ? 'whole' : 'selected'
      return {
        description: 'configmaps.v1 in ns',
        listPage: (page) => {
          page.onBytes?.(1)
          told.push(`${who} list ${page.onBytes === undefined ? 'without' : 'with'} a counter`)
          return Promise.resolve({ apiVersion: 'v1', kind: 'List', metadata: {}, items: [] })
        },
        watch: (watch) => {
          told.push(`${who} watch ${watch.onBytes === undefined ? 'without' : 'with'} a counter`)
          return Promise.resolve(noEvents())
        },
      }
    }
    let bytes = 0
    const onBytes = (n: number): void => {
      bytes += n
    }
    for (const serverSide of [true, false]) {
      const lw = shardedListWatcher({ source, selection, serverSide, onFallback: () => undefined })
      await lw.listPage({ limit: 500, signal, onBytes })
      await lw.watch({ resourceVersion: '1', timeoutSeconds: 60, signal, onBytes })
    }
    assert.deepEqual(told, [
      'selected list with a counter',
      'selected watch with a counter',
      'whole list with a counter',
      'whole watch with a counter',
    ])
    assert.equal(bytes, 2)
  })

  it('streams its initial list with the served ring’s selector, checked and ended as a list', async () => {
    const selection = new ShardSelection('uid')
    selection.serve(ring.rangesOf('a'))
    const mine = objects.filter((o) => objectInRanges('uid', o.metadata, ring.rangesOf('a')))
    const read = async (lw: ListWatcher, count: number): Promise<WatchEvent[]> => {
      const stream = await lw.watchList?.({ timeoutSeconds: 60, signal })
      assert.ok(stream, 'streams lists')
      const events = stream[Symbol.asyncIterator]()
      const seen: WatchEvent[] = []
      for (let i = 0; i < count; i++) seen.push((await next(events)) ?? assert.fail('ended'))
      return seen
    }
    // An API server that honours the selector: only this replica's share, then the end bookmark.
    const honouring = server(selection, true)
    const held: number[] = []
    const lw = shardedListWatcher({
      source: honouring.source,
      selection,
      onFallback: () => assert.fail('no fallback'),
      onHeld: (_collection, count) => held.push(count),
    })
    const seen = await read(lw, mine.length + 1)
    assert.equal(honouring.selectors[0], selection.selector)
    assert.equal(seen.filter((e) => e.type === 'ADDED').length, mine.length)
    assert.equal(seen.at(-1)?.type, 'BOOKMARK')
    assert.equal(held.at(-1), mine.length)
    // One that ignores it: the first object outside the ranges turns the collection whole.
    const ignoring = server(selection, false)
    const fallbacks: string[] = []
    const whole = shardedListWatcher({
      source: ignoring.source,
      selection,
      onFallback: (collection) => fallbacks.push(collection),
    })
    await read(whole, objects.length + 1)
    assert.deepEqual(fallbacks, ['configmaps.v1 in ns'])
    await read(whole, 1)
    assert.equal(ignoring.selectors[1], undefined, 'streams whole from then on')
    // A ring change ends the stream with a 410, so the informer streams again.
    const events = (await lw.watchList?.({ timeoutSeconds: 60, signal }))?.[Symbol.asyncIterator]()
    assert.ok(events)
    selection.serve(new HashRing(['a']).rangesOf('a'))
    let last: WatchEvent | undefined
    for (let e = await next(events); e !== undefined; e = await next(events)) last = e
    assert.equal(last?.type, 'ERROR')
    assert.equal(last.object['code'], 410)
  })
})
