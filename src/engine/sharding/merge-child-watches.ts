/**
 * Merges the labelled and unlabelled child watches of `bucketedChildWatcher` into one
 * stream for an informer, so that a child being labelled moves between them without ever
 * leaving the cache.
 *
 * @module
 */
import { objectKey } from '../../core/object-key.js'
import type { WatchEvent } from '../../kube/watch-event.js'
import type { ListWatcher } from '../../runtime/informers/list-watcher.js'
import type { ShardSelection } from './shard-selection.js'

/** The in-stream event that makes an informer relist: the buckets changed. */
const BUCKETS_CHANGED: WatchEvent = {
  type: 'ERROR',
  object: {
    apiVersion: 'v1',
    kind: 'Status',
    metadata: {},
    code: 410,
    reason: 'Expired',
    message: 'the shard buckets of this replica changed; relisting',
  },
}

/** What one list saw: the labelled source it used and where each watch starts. */
export interface ListedChildren {
  labelled: { readonly selector: string; readonly source: ListWatcher } | undefined
  /** The keys listed or added unlabelled (shrinks to none once every child is labelled). */
  readonly unlabelled: Set<string>
  resourceVersions: { labelled: string; unlabelled: string }
  held: number
}

/** What {@link mergeChildWatches} merges, and where it reports. */
export interface ChildWatches {
  /** The labelled watch; absent when this replica owns no bucket. */
  readonly labelled: AsyncIterable<WatchEvent> | undefined
  readonly unlabelled: AsyncIterable<WatchEvent>
  /** The list's state: unlabelled keys and resource versions, updated as events come. */
  readonly listed: ListedChildren
  readonly selection: ShardSelection
  /** Tells whether the buckets changed since the list. */
  readonly outdated: () => boolean
  readonly handoverMs: number
  readonly received: () => void
  readonly hold: (delta: number) => void
}

type Source = 'labelled' | 'unlabelled'
type Step =
  | { readonly kind: 'event'; readonly from: Source; readonly result: IteratorResult<WatchEvent> }
  | { readonly kind: 'changed' }
  | { readonly kind: 'due' }

/**
 * One stream of both watches: ends when either ends, with a 410 when the buckets change. An
 * unlabelled child's delete waits up to `handoverMs` for the labelled watch to add it.
 */
export async function* mergeChildWatches(watches: ChildWatches): AsyncGenerator<WatchEvent> {
  const iterators = new Map<Source, AsyncIterator<WatchEvent>>()
  if (watches.labelled !== undefined)
    iterators.set('labelled', watches.labelled[Symbol.asyncIterator]())
  iterators.set('unlabelled', watches.unlabelled[Symbol.asyncIterator]())
  const reads = new Map<Source, Promise<Step>>()
  const read = (from: Source): void => {
    const next = iterators.get(from)?.next()
    if (next === undefined) return
    // A read abandoned when the merged stream ends may still fail when its stream is closed.
    void next.catch(() => undefined)
    reads.set(
      from,
      next.then((result) => ({ kind: 'event', from, result }))
    )
  }
  for (const from of iterators.keys()) read(from)
  let changed: () => void = () => undefined
  const change = new Promise<Step>((resolve) => {
    changed = () => {
      if (watches.outdated()) resolve({ kind: 'changed' })
    }
  })
  const stopListening = watches.selection.onChange(changed)
  /** Unlabelled children's deletes held back, by key, with when they are due. */
  const pending = new Map<string, { readonly event: WatchEvent; readonly dueMs: number }>()
  try {
    changed()
    for (;;) {
      const timer = due(pending)
      const step = await Promise.race([...reads.values(), change, timer.step])
      timer.cancel()
      if (step.kind === 'changed') {
        yield BUCKETS_CHANGED
        return
      }
      if (step.kind === 'due') {
        yield* releaseDue(pending, watches)
        continue
      }
      if (step.result.done === true) {
        yield* releaseDue(pending, watches, true)
        return
      }
      read(step.from)
      const out = route(step.from, step.result.value, pending, watches)
      if (out !== undefined) yield out
    }
  } finally {
    stopListening()
    for (const iterator of iterators.values())
      void Promise.resolve(iterator.return?.()).catch(() => undefined)
  }
}

/** What an event of `from` becomes in the merged stream (undefined: nothing, or held back). */
function route(
  from: Source,
  event: WatchEvent,
  pending: Map<string, { readonly event: WatchEvent; readonly dueMs: number }>,
  { listed, handoverMs, received, hold }: ChildWatches
): WatchEvent | undefined {
  const rv = event.object.metadata.resourceVersion
  if (event.type !== 'ERROR' && rv !== undefined && rv !== '') listed.resourceVersions[from] = rv
  if (event.type === 'BOOKMARK' || event.type === 'ERROR') return event
  received()
  const key = objectKey(event.object)
  if (from === 'unlabelled') {
    if (event.type === 'DELETED') {
      if (!listed.unlabelled.delete(key)) return undefined
      pending.set(key, { event, dueMs: Date.now() + handoverMs })
      return undefined
    }
    if (event.type === 'ADDED' && !listed.unlabelled.has(key)) {
      listed.unlabelled.add(key)
      hold(1)
    }
    return event
  }
  if (event.type === 'DELETED') {
    hold(-1)
    // Its label was removed and the unlabelled watch already has it (counted twice): it stays.
    return listed.unlabelled.has(key) ? undefined : event
  }
  if (event.type === 'ADDED') {
    if (pending.delete(key)) return { type: 'MODIFIED', object: event.object }
    if (listed.unlabelled.delete(key)) return { type: 'MODIFIED', object: event.object }
    hold(1)
  }
  return event
}

/** A step when the first held-back delete is due (never when none is held), and its cancel. */
function due(pending: ReadonlyMap<string, { readonly dueMs: number }>): {
  readonly step: Promise<Step>
  readonly cancel: () => void
} {
  let first = Infinity
  for (const { dueMs } of pending.values()) first = Math.min(first, dueMs)
  if (first === Infinity)
    return { step: new Promise<Step>(() => undefined), cancel: () => undefined }
  let timer: NodeJS.Timeout | undefined
  const step = new Promise<Step>((resolve) => {
    timer = setTimeout(
      () => {
        resolve({ kind: 'due' })
      },
      Math.max(0, first - Date.now())
    )
  })
  return {
    step,
    cancel: () => {
      clearTimeout(timer)
    },
  }
}

/** Yields the held-back deletes that are due (all of them with `all`). */
function* releaseDue(
  pending: Map<string, { readonly event: WatchEvent; readonly dueMs: number }>,
  { hold }: ChildWatches,
  all = false
): Generator<WatchEvent> {
  const now = Date.now()
  for (const [key, { event, dueMs }] of pending) {
    if (!all && dueMs > now) continue
    pending.delete(key)
    hold(-1)
    yield event
  }
}
