// An in-memory collection served as the API server serves one, for the informer's unit tests of
// both ways to a first sync: paged lists with watches from a resourceVersion (410 once compacted),
// and streaming initial lists (the current objects as ADDED events, then the bookmark annotated
// `k8s.io/initial-events-end`, then the changes). It can also refuse streaming lists as a server
// with the WatchList gate off does (422 Invalid), or ignore them as no real server does.
import type { KubeList, KubeObject } from '../../src/core/kube-object.js'
import { GoneError, InvalidError } from '../../src/kube/api-error.js'
import type { WatchEvent, WatchEventType } from '../../src/kube/watch-event.js'
import { INITIAL_EVENTS_END_ANNOTATION } from '../../src/runtime/informers/initial-events.js'
import type { ListWatcher } from '../../src/runtime/informers/list-watcher.js'

type ListPageOptions = Parameters<ListWatcher['listPage']>[0]
type WatchOptions = Parameters<ListWatcher['watch']>[0]
type WatchListOptions = Parameters<NonNullable<ListWatcher['watchList']>>[0]

/** One open watch stream: events queue until the informer reads them; it ends or fails. */
export class MemoryStream implements AsyncIterable<WatchEvent> {
  readonly #queue: (WatchEvent | { readonly end: true } | { readonly error: Error })[] = []
  /** Read position in the queue: shift() would copy a long queue on every event. */
  #next = 0
  #wake: (() => void) | undefined
  /** Whether the informer closed or abandoned it. */
  closed = false

  constructor(signal: AbortSignal) {
    signal.addEventListener(
      'abort',
      () => {
        this.closed = true
        this.#push({ error: signal.reason as Error })
      },
      { once: true }
    )
  }

  /** Queues one event. */
  send(type: WatchEventType, object: KubeObject): void {
    this.#push({ type, object })
  }

  /** Ends the stream after what is queued, as a server-side timeout does. */
  end(): void {
    this.#push({ end: true })
  }

  /** Fails the stream after what is queued, as a dropped connection does. */
  fail(error: Error): void {
    this.#push({ error })
  }

  #push(step: WatchEvent | { readonly end: true } | { readonly error: Error }): void {
    this.#queue.push(step)
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    try {
      for (;;) {
        const step = this.#queue[this.#next]
        if (step === undefined) {
          await new Promise<void>((resolve) => {
            this.#wake = resolve
          })
          continue
        }
        this.#next++
        if ('end' in step) return
        if ('error' in step) throw step.error
        yield step
      }
    } finally {
      this.closed = true
    }
  }
}

/** How the collection answers a streaming initial list. */
export type WatchListMode =
  /** As kube-apiserver with the WatchList gate on. */
  | 'stream'
  /** As kube-apiserver with the gate off: 422 Invalid. */
  | 'refuse'
  /** Sends the objects as a watch from "" would and ends, without the end bookmark. */
  | 'ignore'

/** A collection of ConfigMaps in one namespace, with the list and watch calls it served. */
export class MemoryCollection implements ListWatcher {
  readonly description = 'configmaps.v1 (memory)'
  readonly #objects = new Map<string, KubeObject>()
  readonly #log: { readonly rv: number; readonly event: WatchEvent }[] = []
  #rv = 100
  /** Watches from a resourceVersion below this get 410 Gone. */
  #compactedRv = 100
  /** Streams open now, each with whether it is still in its initial phase (held bookmark). */
  readonly #streams = new Set<MemoryStream>()
  /** How a streaming initial list is answered. */
  watchListMode: WatchListMode = 'stream'
  /** When set, a streaming list holds its end bookmark until {@link releaseBookmarks}. */
  holdBookmarks = false
  readonly #held: (() => void)[] = []
  /** Objects per answered streaming list before it fails (a dropped connection), once. */
  failStreamAfter: number | undefined
  /** The calls served, in order: `list`, `watch <rv>`, `watchList`. */
  readonly calls: string[] = []
  /** Every stream opened, in order. */
  readonly streams: MemoryStream[] = []

  /** The objects as a fresh list would give them, `name@rv` sorted. */
  state(): string[] {
    return [...this.#objects.values()].map(nameAtRv).sort()
  }

  /** Creates or replaces `name` with `value`, at a new resourceVersion. */
  put(name: string, value: string): void {
    const type = this.#objects.has(name) ? 'MODIFIED' : 'ADDED'
    const object = configMap(name, value, String(++this.#rv))
    this.#objects.set(name, object)
    this.#record(type, object)
  }

  /** Deletes `name`, at a new resourceVersion. */
  remove(name: string): void {
    const object = this.#objects.get(name)
    if (object === undefined) return
    this.#objects.delete(name)
    const last = {
      ...object,
      metadata: { ...object.metadata, resourceVersion: String(++this.#rv) },
    }
    this.#record('DELETED', last)
  }

  /** Forgets the history: watches from an older resourceVersion get 410 from now on. */
  compact(): void {
    this.#compactedRv = this.#rv
    this.#log.length = 0
  }

  /** Ends every open stream, as the server's watch timeout does. */
  endStreams(): void {
    for (const stream of this.#streams) stream.end()
    this.#streams.clear()
  }

  /** Sends the held end bookmarks. */
  releaseBookmarks(): void {
    for (const send of this.#held.splice(0)) send()
  }

  listPage(options: ListPageOptions): Promise<KubeList> {
    this.calls.push(options.continue === undefined ? 'list' : 'list (continued)')
    // One page: the snapshot a consistent list gives.
    return Promise.resolve({
      apiVersion: 'v1',
      kind: 'ConfigMapList',
      metadata: { resourceVersion: String(this.#rv) },
      items: [...this.#objects.values()],
    })
  }

  watch(options: WatchOptions): Promise<AsyncIterable<WatchEvent>> {
    this.calls.push(`watch ${options.resourceVersion}`)
    const from = Number(options.resourceVersion)
    if (from < this.#compactedRv) return Promise.reject(gone())
    const stream = this.#open(options.signal)
    for (const { rv, event } of this.#log) if (rv > from) stream.send(event.type, event.object)
    return Promise.resolve(stream)
  }

  watchList(options: WatchListOptions): Promise<AsyncIterable<WatchEvent>> {
    this.calls.push('watchList')
    if (this.watchListMode === 'refuse') return Promise.reject(invalid())
    const stream = this.#open(options.signal)
    const objects = [...this.#objects.values()]
    const failAfter = this.failStreamAfter
    this.failStreamAfter = undefined
    for (const [index, object] of objects.entries()) {
      if (index === failAfter) {
        stream.fail(new Error('connection reset'))
        return Promise.resolve(stream)
      }
      stream.send('ADDED', object)
    }
    if (this.watchListMode === 'ignore') {
      stream.end()
      return Promise.resolve(stream)
    }
    // The bookmark's resourceVersion is read when it is sent: changes held before it are in it.
    const sendBookmark = (): void => {
      stream.send('BOOKMARK', endBookmark(String(this.#rv)))
    }
    if (this.holdBookmarks) this.#held.push(sendBookmark)
    else sendBookmark()
    return Promise.resolve(stream)
  }

  #open(signal: AbortSignal): MemoryStream {
    const stream = new MemoryStream(signal)
    this.#streams.add(stream)
    this.streams.push(stream)
    return stream
  }

  #record(type: WatchEventType, object: KubeObject): void {
    const event = { type, object }
    this.#log.push({ rv: this.#rv, event })
    for (const stream of this.#streams) {
      if (stream.closed) this.#streams.delete(stream)
      else stream.send(type, object)
    }
  }
}

/** `name@resourceVersion` of an object. */
export function nameAtRv(object: KubeObject): string {
  return `${object.metadata.name ?? ''}@${object.metadata.resourceVersion ?? ''}`
}

function configMap(name: string, value: string, resourceVersion: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'ns', resourceVersion },
    data: { value },
  }
}

function endBookmark(resourceVersion: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { resourceVersion, annotations: { [INITIAL_EVENTS_END_ANNOTATION]: 'true' } },
  }
}

function gone(): GoneError {
  return new GoneError('GET configmaps: 410 Expired', {
    statusCode: 410,
    reason: 'Expired',
    request: { method: 'GET', path: '/api/v1/namespaces/ns/configmaps' },
  })
}

function invalid(): InvalidError {
  return new InvalidError(
    'GET configmaps: 422 Invalid: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
    { statusCode: 422, reason: 'Invalid', request: { method: 'GET', path: '/api/v1/configmaps' } }
  )
}
