import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeList, KubeObject } from '../../core/kube-object.js'
import type { WatchEvent } from '../../kube/watch-event.js'
import type { ListWatcher } from '../../runtime/informers/list-watcher.js'
import { HashRing } from '../../runtime/ring/hash-ring.js'
import { bucketSelector, bucketsTouching } from '../../runtime/ring/shard-bucket.js'
import { bucketedChildWatcher, SHARD_BUCKET_LABEL } from './bucketed-child-watcher.js'
import { ShardSelection } from './shard-selection.js'

const child = (name: string, rv: string, bucket?: number): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name,
    namespace: 'ns',
    resourceVersion: rv,
    ...(bucket === undefined ? {} : { labels: { [SHARD_BUCKET_LABEL]: String(bucket) } }),
  },
})

/** A server double: per label selector, its pages (one item each) and a pushable watch. */
function server(items: Record<'labelled' | 'unlabelled', KubeObject[]>) {
  const lists: { selector: string; continue: string | undefined }[] = []
  const watches: { selector: string; resourceVersion: string }[] = []
  const pushes = new Map<string, (event: WatchEvent | 'end') => void>()
  const which = (selector: string): 'labelled' | 'unlabelled' =>
    selector.startsWith('!') ? 'unlabelled' : 'labelled'
  const source = (selector: string): ListWatcher => ({
    description: `configmaps.v1 in ns (${selector})`,
    listPage: (page) => {
      lists.push({ selector, continue: page.continue })
      const all = items[which(selector)]
      const at = Number(page.continue ?? '0')
      const more = at + 1 < all.length ? String(at + 1) : undefined
      return Promise.resolve({
        apiVersion: 'v1',
        kind: 'ConfigMapList',
        metadata: { resourceVersion: which(selector) === 'labelled' ? '10' : '20', continue: more },
        items: all.slice(at, at + 1),
      } as KubeList)
    },
    watch: (watch) => {
      watches.push({ selector, resourceVersion: watch.resourceVersion })
      const queue: (WatchEvent | 'end')[] = []
      let wake: () => void = () => undefined
      pushes.set(which(selector), (event) => {
        queue.push(event)
        wake()
      })
      async function* events(): AsyncGenerator<WatchEvent> {
        for (;;) {
          const event = queue.shift()
          if (event === 'end') return
          if (event !== undefined) yield event
          else await new Promise<void>((resolve) => (wake = resolve))
        }
      }
      return Promise.resolve(events())
    },
  })
  const push = (to: 'labelled' | 'unlabelled', event: WatchEvent | 'end'): void => {
    pushes.get(to)?.(event)
  }
  return { source, lists, watches, push }
}

const signal = new AbortController().signal
const ring = new HashRing(['a', 'b', 'c'])

/** Lists every page the way an informer does; returns the items. */
async function listAll(lw: ListWatcher): Promise<KubeObject[]> {
  const items: KubeObject[] = []
  let token: string | undefined
  do {
    const page = await lw.listPage({
      limit: 1,
      signal,
      ...(token === undefined ? {} : { continue: token }),
    })
    items.push(...page.items)
    token = page.metadata.continue
  } while (token !== undefined && token !== '')
  return items
}

async function started(items: Record<'labelled' | 'unlabelled', KubeObject[]>, handoverMs = 50) {
  const selection = new ShardSelection('uid')
  selection.serve(ring.rangesOf('a'))
  const fake = server(items)
  const held: number[] = []
  const lw = bucketedChildWatcher({
    source: fake.source,
    selection,
    handoverMs,
    onHeld: (_, count) => held.push(count),
  })
  const listed = await listAll(lw)
  const events = (await lw.watch({ resourceVersion: '99', timeoutSeconds: 60, signal }))[
    Symbol.asyncIterator
  ]()
  return { selection, fake, held, listed, events }
}

describe('bucketedChildWatcher', () => {
  it('lists the buckets of the served ranges, then the unlabelled children, page by page', async () => {
    const { fake, held, listed } = await started({
      labelled: [child('x', '1', 3), child('y', '2', 4)],
      unlabelled: [child('z', '3')],
    })
    const buckets = bucketSelector(SHARD_BUCKET_LABEL, bucketsTouching(ring.rangesOf('a')))
    assert.deepEqual(
      fake.lists.map((l) => [l.selector, l.continue]),
      [
        [buckets, undefined],
        [buckets, '1'],
        [`!${SHARD_BUCKET_LABEL}`, undefined],
      ]
    )
    assert.deepEqual(
      listed.map((o) => o.metadata.name),
      ['x', 'y', 'z']
    )
    assert.equal(held.at(-1), 3)
  })

  it('watches each selector from its own list resource version', async () => {
    const { fake } = await started({ labelled: [child('x', '1', 3)], unlabelled: [] })
    assert.deepEqual(
      fake.watches.map((w) => w.resourceVersion),
      ['10', '20']
    )
  })

  it('never deletes a child being labelled, in either order of the two watches', async () => {
    const { fake, events, held } = await started({
      labelled: [],
      unlabelled: [child('z', '3'), child('w', '4')],
    })
    fake.push('unlabelled', { type: 'DELETED', object: child('z', '5') })
    fake.push('labelled', { type: 'ADDED', object: child('z', '5', 3) })
    assert.deepEqual(await events.next(), {
      done: false,
      value: { type: 'MODIFIED', object: child('z', '5', 3) },
    })
    fake.push('labelled', { type: 'ADDED', object: child('w', '6', 3) })
    assert.equal(((await events.next()).value as WatchEvent).type, 'MODIFIED')
    fake.push('unlabelled', { type: 'DELETED', object: child('w', '6') })
    fake.push('labelled', { type: 'MODIFIED', object: child('w', '7', 3) })
    const after = await events.next()
    assert.deepEqual(after.value, { type: 'MODIFIED', object: child('w', '7', 3) })
    assert.equal(held.at(-1), 2)
  })

  it('passes on the delete of an unlabelled child once no labelled add came', async () => {
    const { fake, events, held } = await started({ labelled: [], unlabelled: [child('z', '3')] })
    fake.push('unlabelled', { type: 'DELETED', object: child('z', '5') })
    assert.deepEqual((await events.next()).value, { type: 'DELETED', object: child('z', '5') })
    assert.equal(held.at(-1), 0)
  })

  it('ends the watch with a 410 when the served ranges change, and not for the same buckets', async () => {
    const { selection, events } = await started({ labelled: [], unlabelled: [] })
    selection.serve(ring.rangesOf('a'))
    selection.serve(new HashRing(['a', 'b']).rangesOf('a'))
    const event = (await events.next()).value as WatchEvent
    assert.equal(event.type, 'ERROR')
    assert.equal((event.object as { code?: number }).code, 410)
  })
})
