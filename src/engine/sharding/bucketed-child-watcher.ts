/**
 * Children of this replica's parents under the uid shard key: a {@link ListWatcher} over two
 * plain label selectors, the shard buckets of the served ring (`<label> in (…)`) and the
 * children not labelled yet (`!<label>`), merged into one collection.
 *
 * @remarks
 * **Why buckets.** A child's own uid says nothing about its parent, so the engine labels each
 * child it writes with its parent's bucket ({@link SHARD_BUCKET_LABEL}). A label selector is
 * honoured by every API server, so this needs no `ShardedListAndWatch` gate.
 *
 * **Why the unlabelled ones too.** Children written before sharding (or by an older engine)
 * have no label until their parent's next sync labels them; without the second selector they
 * would be invisible to every replica. Once all are labelled the second watch is empty and
 * costs one idle connection per child collection.
 *
 * **A child moving from one selector to the other.** Labelling a child ends it in the
 * unlabelled watch (a `DELETED`) and starts it in the labelled one (an `ADDED`), in either
 * order. An unlabelled child's delete is therefore held back for {@link HANDOVER_MS}: if the
 * labelled watch adds the child meanwhile, the delete is dropped and the add becomes an update,
 * so the cache never loses a child being labelled.
 *
 * @module
 */
import { objectKey } from '../../core/object-key.js'
import type { KubeList } from '../../core/kube-object.js'
import type { ListWatcher } from '../../runtime/informers/list-watcher.js'
import { bucketSelector, bucketsTouching } from '../../runtime/ring/shard-bucket.js'
import type { ShardSelection } from './shard-selection.js'
import type { ChildListings } from './child-listings.js'
import { mergeChildWatches } from './merge-child-watches.js'
import type { ListedChildren } from './merge-child-watches.js'

/** The label the engine puts on each child it writes under the uid key: its parent's bucket. */
export const SHARD_BUCKET_LABEL = 'metacontroller.io/shard-bucket'

/** How long an unlabelled child's delete waits for the labelled watch to add it. */
export const HANDOVER_MS = 1000

/** Options of {@link bucketedChildWatcher}. */
export interface BucketedChildWatcherOptions {
  /** The collection's list-watcher with a label selector added to its scope's. */
  readonly source: (labelSelector: string) => ListWatcher
  readonly selection: ShardSelection
  /** The collection's name in the metrics; the unlabelled list-watcher's description by default. */
  readonly collection?: string
  /** Counts the objects received (listed items and watch events, bookmarks aside). */
  readonly onReceived?: (collection: string, count: number) => void
  /** Reports how many objects the informer holds. */
  readonly onHeld?: (collection: string, count: number) => void
  /** Told when a list for the served ring is complete. */
  readonly listings?: ChildListings
  /** How long a delete of an unlabelled child is held back ({@link HANDOVER_MS}). */
  readonly handoverMs?: number
}

/** A list-watcher of the children of this replica's buckets, and of the unlabelled ones. */
export function bucketedChildWatcher(options: BucketedChildWatcherOptions): ListWatcher {
  const { source, selection } = options
  const unlabelled = source(`!${SHARD_BUCKET_LABEL}`)
  const description = `${unlabelled.description} {shard buckets}`
  const listed: ListedChildren = {
    labelled: undefined,
    unlabelled: new Set(),
    resourceVersions: { labelled: '', unlabelled: '' },
    held: 0,
  }
  const hold = (delta: number, reset = false): void => {
    listed.held = (reset ? 0 : listed.held) + delta
    options.onHeld?.(options.collection ?? unlabelled.description, listed.held)
  }
  const received = (count: number): void => {
    options.onReceived?.(options.collection ?? unlabelled.description, count)
  }
  const id = options.listings?.register()
  let generation = 0
  return {
    description,
    listPage: async (page) => {
      let token = page.continue
      if (token === undefined) {
        await selection.ready(page.signal)
        generation = selection.generation
        if (id !== undefined) options.listings?.started(id)
        const selector = bucketSelector(SHARD_BUCKET_LABEL, bucketsTouching(selection.ranges ?? []))
        listed.labelled =
          selector === undefined ? undefined : { selector, source: source(selector) }
        listed.unlabelled.clear()
        hold(0, true)
        token = listed.labelled === undefined ? 'U:' : 'L:'
      }
      const phase = token.slice(0, 2)
      const inner = token.slice(2)
      const from = phase === 'L:' ? listed.labelled?.source : unlabelled
      if (from === undefined) throw new Error(`${description}: the list's selector is gone`)
      const list = await readPage(from, page, inner)
      const more = list.metadata.continue ?? ''
      record(listed, phase === 'L:' ? 'labelled' : 'unlabelled', list)
      received(list.items.length)
      hold(list.items.length)
      const next = more !== '' ? `${phase}${more}` : phase === 'L:' ? 'U:' : undefined
      // Told once the informer has put the list in its cache (it does so in the microtasks
      // after this page returns): a sync it lets through must find the children there.
      if (next === undefined && id !== undefined) {
        // The generation this list was made for, even if another list began before the immediate.
        const made = generation
        setImmediate(() => {
          options.listings?.listed(id, made)
        })
      }
      return withContinue(list, next)
    },
    watch: (watch) => watchBoth(watch, { listed, unlabelled, selection, options, received, hold }),
  }
}

/** One page of `from`, continuing at `inner` (its own token; empty: the first page). */
function readPage(
  from: ListWatcher,
  page: Parameters<ListWatcher['listPage']>[0],
  inner: string
): Promise<KubeList> {
  return from.listPage({
    limit: page.limit,
    signal: page.signal,
    ...(page.onBytes === undefined ? {} : { onBytes: page.onBytes }),
    ...(inner === '' ? {} : { continue: inner }),
  })
}

/** Notes where the watch of `from` starts and, for unlabelled children, their keys. */
function record(listed: ListedChildren, from: 'labelled' | 'unlabelled', list: KubeList): void {
  listed.resourceVersions[from] = list.metadata.resourceVersion ?? ''
  if (from === 'labelled') return
  for (const item of list.items) listed.unlabelled.add(objectKey(item))
}

/** Opens both watches from where the list left them, merged. */
async function watchBoth(
  watch: Parameters<ListWatcher['watch']>[0],
  state: {
    readonly listed: ListedChildren
    readonly unlabelled: ListWatcher
    readonly selection: ShardSelection
    readonly options: BucketedChildWatcherOptions
    readonly received: (count: number) => void
    readonly hold: (delta: number) => void
  }
): ReturnType<ListWatcher['watch']> {
  const { listed, unlabelled, selection, options, received, hold } = state
  const current = listed.labelled
  const labelledEvents =
    current === undefined
      ? undefined
      : await current.source.watch({ ...watch, resourceVersion: listed.resourceVersions.labelled })
  const unlabelledEvents = await unlabelled.watch({
    ...watch,
    resourceVersion: listed.resourceVersions.unlabelled,
  })
  const outdated = (): boolean =>
    bucketSelector(SHARD_BUCKET_LABEL, bucketsTouching(selection.ranges ?? [])) !==
    current?.selector
  return mergeChildWatches({
    labelled: labelledEvents,
    unlabelled: unlabelledEvents,
    listed,
    selection,
    outdated,
    handoverMs: options.handoverMs ?? HANDOVER_MS,
    received: () => {
      received(1)
    },
    hold,
  })
}

/** `list` with our own continue token (or none at the end). */
function withContinue(list: KubeList, next: string | undefined): KubeList {
  const metadata = { ...list.metadata }
  if (next === undefined) delete metadata.continue
  else metadata.continue = next
  return { ...list, metadata }
}
