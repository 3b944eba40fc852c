/**
 * Counts the response bytes of the sharded informers' lists and watch streams, per collection,
 * so that what server-side sharding saves a replica can be read in bytes, not only in objects.
 *
 * @remarks
 * The count comes from the HTTP layer (the length of each body chunk as it arrives), so it costs
 * an addition per chunk and never a second serialization. It wraps {@link ShardedWatches} rather
 * than living in the sharded list-watcher so that each informer call asks for it: the sharded
 * list-watcher hands the call's `onBytes` on to whichever list-watcher (with or without the shard
 * selector) answers it.
 *
 * @module
 */
import type { ListWatcher } from '../../runtime/informers/list-watcher.js'
import { describeCollection } from '../../runtime/informers/list-watcher.js'
import type { ListWatcherFactory } from '../../runtime/informers/shared-informers.js'
import type { ShardedWatches } from './parent-shard.js'

/**
 * `watches`, with every list page and watch stream of its list-watchers telling `onBytes` how
 * many bytes arrived, labelled with the collection as the other shard metrics label it.
 */
export function countReceivedBytes(
  watches: ShardedWatches,
  onBytes: (collection: string, bytes: number) => void
): ShardedWatches {
  const countedFactory =
    (factory: ListWatcherFactory): ListWatcherFactory =>
    (ref, scope) => {
      const collection = describeCollection(ref, scope)
      return counted(factory(ref, scope), (bytes) => {
        onBytes(collection, bytes)
      })
    }
  const { childListWatchers, childLabels } = watches
  return {
    shardsChildren: (ref) => watches.shardsChildren(ref),
    listWatchers: (client) => countedFactory(watches.listWatchers(client)),
    ...(childListWatchers === undefined
      ? {}
      : { childListWatchers: (client) => countedFactory(childListWatchers(client)) }),
    ...(childLabels === undefined ? {} : { childLabels }),
  }
}

/** `source`, asking each of its calls to tell `onBytes` the bytes it received. */
function counted(source: ListWatcher, onBytes: (bytes: number) => void): ListWatcher {
  return {
    description: source.description,
    listPage: (page) => source.listPage({ ...page, onBytes }),
    watch: (watch) => source.watch({ ...watch, onBytes }),
    ...(source.watchList === undefined
      ? {}
      : {
          watchList: (watch) => {
            if (source.watchList === undefined)
              throw new Error(`${source.description} cannot stream`)
            return source.watchList({ ...watch, onBytes })
          },
        }),
  }
}
