/**
 * Server-side sharded list and watch (KEP-5866, feature gate `ShardedListAndWatch`): a
 * {@link ListWatcher} that sends the API server the `shardSelector` of this replica's ranges, so
 * only its slice of a collection is received and cached, and relists when the ranges change.
 *
 * @remarks
 * **Knowing that the server honoured the selector.** A list of custom resources does not echo
 * `metadata.shardInfo`, so every received object's hash is checked against the ranges it was
 * asked for. The first one outside them proves the server ignored the selector (an API server
 * without the gate, or older than 1.36): the collection is then listed and watched whole from
 * then on, `onFallback` is called once, and the `ShardGuard` filters on the client as without
 * server-side sharding. Nothing is lost either way: an ignored selector only means more objects.
 *
 * **Ring changes.** When the ranges change, the open watch ends with an in-stream 410, which
 * makes the informer relist at once with the new selector: parents that arrive are added (and
 * enqueued), parents that left are dropped from the cache. A streaming initial list (WatchList)
 * takes the selector as a list does, and is checked and ended the same way.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { WatchEvent } from '../../kube/watch-event.js'
import type { ListWatcher } from '../../runtime/informers/list-watcher.js'
import type { HashRange } from '../../runtime/ring/hash-ring.js'
import { objectInRanges } from '../../runtime/ring/shard-selector.js'
import type { ShardSelection } from './shard-selection.js'

/** Options of {@link shardedListWatcher}. */
export interface ShardedListWatcherOptions {
  /** The collection's list-watcher with a shard selector, or whole without one. */
  readonly source: (shardSelector?: string) => ListWatcher
  readonly selection: ShardSelection
  /** Send the selector; false: list and watch whole (client-side filtering only). */
  readonly serverSide?: boolean
  /** Called once, when the server sent an object outside the ranges it was asked for. */
  readonly onFallback: (collection: string, object: KubeObject) => void
  /** Counts the objects received (listed items and watch events, bookmarks aside). */
  readonly onReceived?: (collection: string, count: number) => void
  /** Reports how many objects the informer holds: the last list, plus adds, minus deletes. */
  readonly onHeld?: (collection: string, count: number) => void
}

/** The in-stream event that makes an informer relist: the ranges changed. */
const RANGES_CHANGED: WatchEvent = {
  type: 'ERROR',
  object: {
    apiVersion: 'v1',
    kind: 'Status',
    metadata: {},
    code: 410,
    reason: 'Expired',
    message: 'the shard ranges of this replica changed; relisting',
  },
}

/** The selector-carrying list-watcher of one list and its watch. */
interface Selected {
  readonly ranges: readonly HashRange[]
  readonly selector: string
  readonly source: ListWatcher
}

/** A list-watcher of one collection that receives only this replica's shard ranges. */
export function shardedListWatcher(options: ShardedListWatcherOptions): ListWatcher {
  const { source, selection } = options
  const whole = source()
  let honoured = options.serverSide ?? true
  let listed: Selected | undefined
  let held = 0
  let listing = 0
  const received = (count: number): void => {
    options.onReceived?.(whole.description, count)
  }
  const hold = (count: number): void => {
    held = count
    options.onHeld?.(whole.description, held)
  }
  const check = (object: KubeObject): void => {
    if (!honoured || listed === undefined) return
    if (objectInRanges(selection.field, object.metadata, listed.ranges)) return
    honoured = false
    options.onFallback(whole.description, object)
  }
  // A list, or a streaming list, starts from nothing with the selector of the ring served now.
  const reselect = async (signal: AbortSignal): Promise<void> => {
    if (!honoured) return
    await selection.ready(signal)
    listed = selected(source, selection)
  }
  return {
    description: `${whole.description} {shard ${selection.field}}`,
    listPage: async (page) => {
      if (page.continue === undefined) await reselect(page.signal)
      const list = await (honoured ? (listed?.source ?? whole) : whole).listPage(page)
      for (const item of list.items) check(item)
      received(list.items.length)
      listing = (page.continue === undefined ? 0 : listing) + list.items.length
      const more = list.metadata.continue
      if (more === undefined || more === '') hold(listing)
      return list
    },
    watch: async (watch) => {
      const current = honoured ? listed : undefined
      return checked(current, await (current?.source ?? whole).watch(watch))
    },
    ...(whole.watchList === undefined
      ? {}
      : {
          watchList: async (watch) => {
            await reselect(watch.signal)
            const current = honoured ? listed : undefined
            const from = current?.source ?? whole
            if (from.watchList === undefined) throw new Error(`${from.description} cannot stream`)
            hold(0)
            return checked(current, await from.watchList(watch))
          },
        }),
  }
  function checked(current: Selected | undefined, events: AsyncIterable<WatchEvent>) {
    const outdated = (): boolean =>
      current !== undefined && honoured && selection.selector !== current.selector
    return relistOnChange(events, outdated, {
      selection,
      check: (event) => {
        received(1)
        check(event.object)
        if (event.type === 'ADDED') hold(held + 1)
        else if (event.type === 'DELETED') hold(held - 1)
      },
    })
  }
}

/** The list-watcher with the selection's current selector; undefined when it selects nothing. */
function selected(
  source: (shardSelector?: string) => ListWatcher,
  selection: ShardSelection
): Selected | undefined {
  const { ranges, selector } = selection
  if (ranges === undefined || selector === undefined) return undefined
  return { ranges, selector, source: source(selector) }
}

/**
 * Passes a watch's events on, checking each object, and ends it with a 410 as soon as
 * `outdated()` tells (at once when the ranges changed while the watch was opening).
 */
async function* relistOnChange(
  events: AsyncIterable<WatchEvent>,
  outdated: () => boolean,
  { selection, check }: { selection: ShardSelection; check: (event: WatchEvent) => void }
): AsyncGenerator<WatchEvent> {
  let changed: () => void = () => undefined
  const change = new Promise<'changed'>((resolve) => {
    changed = () => {
      if (outdated()) resolve('changed')
    }
  })
  const stopListening = selection.onChange(changed)
  const iterator = events[Symbol.asyncIterator]()
  try {
    changed()
    for (;;) {
      const next = iterator.next()
      // A read abandoned for a ring change may still fail when the stream is closed.
      void next.catch(() => undefined)
      const step = await Promise.race([next, change])
      if (step === 'changed') {
        yield RANGES_CHANGED
        return
      }
      if (step.done === true) return
      const event = step.value
      if (event.type !== 'BOOKMARK' && event.type !== 'ERROR') check(event)
      yield event
    }
  } finally {
    stopListening()
    void Promise.resolve(iterator.return?.()).catch(() => undefined)
  }
}
