import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import { FakeClock } from '../clock/fake-clock.js'
import { Informer } from './informer.js'
import type { InformerOptions } from './informer.js'
import { WatchListFallbacks } from './watch-list-fallbacks.js'
import { MemoryCollection, nameAtRv } from '../../../test/support/memory-collection.js'
import { settleMany, until } from '../../../test/support/event-loop-turns.js'

/** Logs every handler call as `add a@101`, `update a@101->105`, `delete a@106`. */
function record(informer: Informer): string[] {
  const log: string[] = []
  informer.subscribe({
    onAdd: (object) => log.push(`add ${nameAtRv(object)}`),
    onUpdate: (old, object) => log.push(`update ${nameAtRv(old)}->${rv(object)}`),
    onDelete: (object) => log.push(`delete ${nameAtRv(object)}`),
  })
  return log
}

function rv(object: KubeObject): string {
  return object.metadata.resourceVersion ?? ''
}

function cache(informer: Informer): string[] {
  return informer.store.list().map(nameAtRv).sort()
}

interface Context {
  readonly clock: FakeClock
  readonly source: MemoryCollection
  readonly informer: Informer
  readonly log: string[]
  readonly lifecycle: string[]
}

function setup(
  options: Omit<InformerOptions, 'clock' | 'observer'> = {},
  source = new MemoryCollection()
): Context {
  const clock = new FakeClock()
  const lifecycle: string[] = []
  const informer = new Informer(source, {
    random: () => 0,
    backoff: { baseMs: 100, maxMs: 1600, jitter: 0 },
    ...options,
    clock,
    observer: {
      onRelist: (_d, reason) => lifecycle.push(`relist ${reason}`),
      onWatchRestart: (_d, reason) => lifecycle.push(`restart ${reason}`),
      onError: (_d, _error, retryInMs) => lifecycle.push(`error retry in ${retryInMs}`),
      onWatchListFallback: () => lifecycle.push('fallback'),
    },
  })
  return { clock, source, informer, log: record(informer), lifecycle }
}

/** Waits until the cache holds what a fresh list of the collection gives. */
async function converged({ informer, source }: Context, what: string): Promise<void> {
  await until(() => JSON.stringify(cache(informer)) === JSON.stringify(source.state()), what)
}

describe('Informer with streaming initial lists', () => {
  it('fills the cache from one watch, with no list call, and only at the end bookmark', async () => {
    const context = setup()
    const { source, informer, log } = context
    source.put('a', '1')
    source.put('b', '1')
    source.holdBookmarks = true
    informer.start()
    await until(() => source.calls.length === 1, 'the streaming list opens')
    // Changes during the initial phase reach the fresh store, not the cache.
    source.put('a', '2')
    source.put('c', '1')
    source.remove('b')
    await settleMany()
    assert.equal(informer.hasSynced(), false)
    assert.equal(informer.store.size, 0, 'the cache waits for the end bookmark')
    assert.deepEqual(log, [])
    source.releaseBookmarks()
    await informer.waitForSync()
    assert.deepEqual(cache(informer), ['a@103', 'c@104'])
    assert.deepEqual(log, ['add a@103', 'add c@104'])
    assert.equal(informer.relists, 1)
    // The same watch goes on after the bookmark.
    source.put('d', '1')
    source.remove('a')
    await until(() => log.length === 4, 'the changes after the sync are handled')
    assert.deepEqual(log.slice(2), ['add d@106', 'delete a@107'])
    assert.deepEqual(source.calls, ['watchList'])
    assert.deepEqual(context.lifecycle, ['relist initial'])
    await informer.stop()
  })

  it('watches from the last resourceVersion when the stream ends after the sync, without relisting', async () => {
    const context = setup()
    const { source, informer } = context
    source.put('a', '1')
    informer.start()
    await informer.waitForSync()
    source.put('b', '1')
    await converged(context, 'b is cached')
    source.endStreams()
    await until(() => source.calls.length === 2, 'a watch reopens')
    assert.deepEqual(source.calls, ['watchList', 'watch 102'])
    source.put('c', '1')
    await converged(context, 'c is cached')
    assert.equal(informer.relists, 1)
    await informer.stop()
  })

  it('streams again after a 410 and sees what vanished meanwhile as deleted, unchanged objects untold', async () => {
    const context = setup()
    const { source, informer, log } = context
    source.put('a', '1')
    source.put('b', '1')
    source.put('c', '1')
    informer.start()
    await informer.waitForSync()
    // Changes the informer misses: its stream ends, the history is compacted away.
    const stream = source.streams[0]
    source.endStreams()
    source.remove('b')
    source.put('c', '2')
    source.put('d', '1')
    source.compact()
    assert.ok(stream?.closed !== undefined)
    await converged(context, 'the cache matches the collection after the 410')
    assert.deepEqual(source.calls, ['watchList', 'watch 103', 'watchList'])
    assert.deepEqual(log, [
      'add a@101',
      'add b@102',
      'add c@103',
      'update c@103->105',
      'add d@106',
      'delete b@102',
    ])
    assert.equal(informer.relists, 2)
    assert.deepEqual(context.lifecycle, ['relist initial', 'relist gone'])
    await informer.stop()
  })

  it('falls back to list and watch when the server refuses, and remembers it across relists', async () => {
    const context = setup()
    const { source, informer, log } = context
    source.watchListMode = 'refuse'
    source.put('a', '1')
    informer.start()
    await informer.waitForSync()
    assert.deepEqual(cache(informer), ['a@101'])
    await until(() => source.calls.length === 3, 'the watch after the list opens')
    assert.deepEqual(source.calls, ['watchList', 'list', 'watch 101'])
    source.put('b', '1')
    await converged(context, 'b is cached')
    // A 410: the relist is a list again, not another refused streaming list.
    source.endStreams()
    source.remove('a')
    source.compact()
    await converged(context, 'the relist after the 410 is applied')
    assert.deepEqual(source.calls.slice(3), ['watch 102', 'list', 'watch 103'])
    assert.deepEqual(log, ['add a@101', 'add b@102', 'delete a@101'])
    assert.deepEqual(context.lifecycle, ['relist initial', 'fallback', 'relist gone'])
    await informer.stop()
  })

  it('shares the fallback with the other informers of the resource', async () => {
    const fallbacks = new WatchListFallbacks()
    const first = setup({ watchListFallback: fallbacks.of('configmaps') })
    first.source.watchListMode = 'refuse'
    first.informer.start()
    await first.informer.waitForSync()
    const second = setup({ watchListFallback: fallbacks.of('configmaps') })
    second.informer.start()
    await second.informer.waitForSync()
    assert.deepEqual(second.source.calls.slice(0, 1), ['list'], 'the second never streams')
    const other = setup({ watchListFallback: fallbacks.of('secrets') })
    other.informer.start()
    await other.informer.waitForSync()
    assert.deepEqual(other.source.calls, ['watchList'], 'another resource still streams')
    await Promise.all([first, second, other].map(({ informer }) => informer.stop()))
  })

  it('falls back when the server streams the objects but ends without the end bookmark', async () => {
    const context = setup()
    const { source, informer, log } = context
    source.watchListMode = 'ignore'
    source.put('a', '1')
    source.put('b', '1')
    informer.start()
    await informer.waitForSync()
    await until(() => source.calls.length === 3, 'the watch after the list opens')
    assert.deepEqual(source.calls, ['watchList', 'list', 'watch 102'])
    assert.deepEqual(log, ['add a@101', 'add b@102'], 'nothing from the ignored stream is told')
    assert.deepEqual(context.lifecycle, ['relist initial', 'fallback'])
    await informer.stop()
  })

  it('streams again after a failure before the end bookmark, never showing a partial cache', async () => {
    const context = setup()
    const { source, informer, clock, log } = context
    source.put('a', '1')
    source.put('b', '1')
    source.put('c', '1')
    source.failStreamAfter = 2
    informer.start()
    await until(() => context.lifecycle.length === 3, 'the failure is reported')
    assert.equal(informer.store.size, 0)
    assert.equal(informer.hasSynced(), false)
    assert.deepEqual(context.lifecycle, ['relist initial', 'error retry in 100', 'restart error'])
    clock.advance(100)
    await informer.waitForSync()
    assert.deepEqual(source.calls, ['watchList', 'watchList'], 'a failure is no refusal')
    assert.deepEqual(log, ['add a@101', 'add b@102', 'add c@103'])
    await informer.stop()
  })

  it('lists and watches when streaming is turned off', async () => {
    const context = setup({ watchList: false })
    context.source.put('a', '1')
    context.informer.start()
    await context.informer.waitForSync()
    await until(() => context.source.calls.length === 2, 'the watch opens')
    assert.deepEqual(context.source.calls, ['list', 'watch 101'])
    await context.informer.stop()
  })

  it('gives the same cache and the same told changes as list and watch for one history', async () => {
    const runs = await Promise.all([true, false].map((watchList) => replay(watchList)))
    assert.deepEqual(runs[0], runs[1])
  })
})

/**
 * Plays one history of changes (creates, updates, deletes, a watch timeout, a compaction) against
 * an informer streaming or listing; returns its cache and the changes told after the first sync.
 */
async function replay(
  watchList: boolean
): Promise<{ cache: string[]; told: string[]; relists: number }> {
  const context = setup({ watchList })
  const { source, informer, log } = context
  for (const name of ['a', 'b', 'c', 'd']) source.put(name, '1')
  informer.start()
  await informer.waitForSync()
  const told = log.length
  const steps: (() => void)[] = [
    () => {
      source.put('a', '2')
    },
    () => {
      source.remove('b')
    },
    () => {
      source.put('e', '1')
    },
    () => {
      // Missed while no watch is open, then compacted away: a 410 and a relist.
      source.endStreams()
      source.put('c', '2')
      source.remove('d')
      source.compact()
    },
    () => {
      source.put('f', '1')
    },
    () => {
      source.remove('e')
    },
  ]
  for (const step of steps) {
    step()
    await settleMany(5)
  }
  await converged(context, 'the cache matches the collection')
  await informer.stop()
  return { cache: cache(informer), told: log.slice(told), relists: informer.relists }
}
