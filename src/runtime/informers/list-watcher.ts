import type { KubeList, KubeObject } from '../../core/kube-object.js'
import type { DynamicClient, ResourceRef } from '../../kube/dynamic-client.js'
import { readWatchEvents } from '../../kube/watch-event.js'
import type { WatchEvent } from '../../kube/watch-event.js'

/**
 * Lists and watches one collection; the seam between informers and the API server.
 *
 * @remarks
 * Implementations should stop work when a call's `signal` aborts; the informer does not depend on
 * it (it abandons a call whose signal aborted), but a call that ignores it leaks its connection.
 */
export interface ListWatcher<T extends KubeObject = KubeObject> {
  /** Human-readable name of the collection, for logs and metrics (`pods.v1 in ns`). */
  readonly description: string
  /** Reads one page of the list. */
  listPage(options: {
    readonly limit: number
    readonly continue?: string
    readonly signal: AbortSignal
    /** Told the byte length of the page's response body (list-watchers over HTTP). */
    readonly onBytes?: (bytes: number) => void
  }): Promise<KubeList<T>>
  /** Opens a watch from `resourceVersion` with bookmarks; the stream ends when the watch does. */
  watch(options: {
    readonly resourceVersion: string
    readonly timeoutSeconds: number
    readonly signal: AbortSignal
    /** Told the byte length of each chunk of the stream as it arrives (list-watchers over HTTP). */
    readonly onBytes?: (bytes: number) => void
  }): Promise<AsyncIterable<WatchEvent>>
  /**
   * Opens a streaming initial list (KEP-3157 WatchList): a watch with bookmarks that first sends
   * the collection's current objects as `ADDED` events, then a `BOOKMARK` annotated
   * `k8s.io/initial-events-end: "true"`, then goes on as a watch. Absent when the implementation
   * cannot; a server that refuses it answers 422 Invalid (or 400), and the informer then lists.
   */
  watchList?(options: {
    readonly timeoutSeconds: number
    readonly signal: AbortSignal
    /** Told the byte length of each chunk of the stream as it arrives (list-watchers over HTTP). */
    readonly onBytes?: (bytes: number) => void
  }): Promise<AsyncIterable<WatchEvent>>
}

/** Selects which objects of a resource an informer caches. */
export interface ListWatchScope {
  /** Only this namespace; all namespaces when absent. */
  readonly namespace?: string
  /** Only objects whose labels match (`app=web,tier!=db`). */
  readonly labelSelector?: string
  /** Only objects whose fields match (`status.phase=Running`). */
  readonly fieldSelector?: string
  /**
   * Only objects in these shard ranges (`shardRange(...) || ...`, API servers with the
   * `ShardedListAndWatch` feature gate; others ignore it, so a caller must check what it gets).
   */
  readonly shardSelector?: string
}

/**
 * Builds a {@link ListWatcher} for a resource over the dynamic client, described as
 * `pods.v1 in ns (labels) [fields]`.
 */
export function dynamicListWatcher<T extends KubeObject = KubeObject>(
  client: DynamicClient,
  ref: ResourceRef,
  scope: ListWatchScope = {}
): ListWatcher<T> {
  return {
    description: describeCollection(ref, scope),
    listPage: (options) =>
      client.listPage<T>(ref, {
        ...scope,
        limit: options.limit,
        signal: options.signal,
        ...(options.continue === undefined ? {} : { continue: options.continue }),
        ...(options.onBytes === undefined ? {} : { onResponseBytes: options.onBytes }),
      }),
    watch: async (options) => {
      const stream = await client.watch(ref, {
        ...scope,
        resourceVersion: options.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: options.timeoutSeconds,
        signal: options.signal,
      })
      return readWatchEvents(stream.body, options.onBytes)
    },
    watchList: async (options) => {
      // No resourceVersion: NotOlderThan "" is a consistent read of the newest state.
      const stream = await client.watch(ref, {
        ...scope,
        sendInitialEvents: true,
        resourceVersionMatch: 'NotOlderThan',
        allowWatchBookmarks: true,
        timeoutSeconds: options.timeoutSeconds,
        signal: options.signal,
      })
      return readWatchEvents(stream.body, options.onBytes)
    },
  }
}

/**
 * How {@link dynamicListWatcher} describes a collection (`pods.v1 in ns (labels) [fields]`), the
 * name metrics label it with; the shard selector is left out.
 */
export function describeCollection(ref: ResourceRef, scope: ListWatchScope = {}): string {
  const where = scope.namespace === undefined ? '' : ` in ${scope.namespace}`
  const selector = scope.labelSelector === undefined ? '' : ` (${scope.labelSelector})`
  const fields = scope.fieldSelector === undefined ? '' : ` [${scope.fieldSelector}]`
  const group = ref.group === '' ? '' : `.${ref.group}`
  return `${ref.resource}.${ref.version}${group}${where}${selector}${fields}`
}
