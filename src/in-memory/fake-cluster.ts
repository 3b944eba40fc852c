/**
 * A small in-memory API server for the engine's unit tier: it implements {@link ObjectClient}
 * (the port the sync steps write through) and hands out {@link ListWatcher}s (the seam informers
 * read through), so that real informers, the real `ParentController` and the real controller
 * kinds run on it without a network.
 *
 * @remarks
 * **Semantics kept** (those a controller can observe): server-set UIDs; one global,
 * monotonically increasing resourceVersion; `generation` 1 on create and bumped when anything
 * but metadata and status changes (and when deletion starts, as the real server does);
 * optimistic concurrency (a stale `resourceVersion` or a foreign `uid` in an update is a 409
 * `ConflictError`); 404 `NotFoundError`; 409 `AlreadyExistsError`; delete preconditions (`uid`,
 * `resourceVersion`); graceful deletion (an object with finalizers gets a `deletionTimestamp`
 * and goes once its last finalizer is removed; no new finalizer may be added meanwhile); the
 * status subresource (`update` keeps the stored status, `updateStatus` changes only the status,
 * both on by default per resource); no-op writes do not bump the resourceVersion; paginated
 * lists from a consistent snapshot; scoped watches that replay from a resourceVersion and turn
 * objects entering or leaving a label scope into ADDED and DELETED.
 *
 * **Left out**: admission, validation of object contents, defaulting, field managers and
 * patches, bookmarks, watch timeouts, and garbage collection unless asked for
 * (`garbageCollection: true`: when an object is removed, each object whose owner references
 * name only removed UIDs is deleted as with Background propagation; the propagation policy of a
 * delete is otherwise ignored).
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import type { ObjectClient } from '../kube/object-client.js'
import type {
  DeleteOptions,
  ObjectCallOptions,
  ResourceRef,
  WriteOptions,
} from '../kube/dynamic-client.js'
import { systemClock } from '../runtime/clock/clock.js'
import type { Clock } from '../runtime/clock/clock.js'
import type { ListWatcher, ListWatchScope } from '../runtime/informers/list-watcher.js'
import type { ListWatcherFactory } from '../runtime/informers/shared-informers.js'
import { fakeApiError } from './fake-api-error.js'
import { compileScope, scopedEvent, WatchChannel } from './fake-watch.js'
import { FakeStore } from './fake-store.js'
import { sortedByKey } from './fake-collection.js'
import { FakeListPages } from './fake-list-pages.js'
import { FakeInjections } from './fake-injections.js'
import type { FakeCallMatch, FakeWriteMethod } from './fake-injections.js'

export type { FakeCallMatch, FakeMethod, FakeWriteMethod } from './fake-injections.js'
import type { ScopeMatcher } from './fake-watch.js'
import { keyOf } from '../core/object-key.js'

/** One write request a client made (successful or not). */
export interface FakeWrite {
  readonly method: FakeWriteMethod
  /** The plural resource name, e.g. `configmaps`. */
  readonly resource: string
  readonly namespace: string | undefined
  readonly name: string
  /** The preconditions a delete carried. */
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string }
  /** The name of the error the request failed with (`ConflictError`); absent on success. */
  readonly error?: string
}

/** Options of {@link FakeCluster}. */
export interface FakeClusterOptions {
  /** Source of `creationTimestamp` and `deletionTimestamp` ({@link systemClock}). */
  readonly clock?: Clock
  /** Deletes dependents whose owners are all gone, as the GC does in Background mode (false). */
  readonly garbageCollection?: boolean
}

/** Options of {@link FakeCluster.settle}. */
export interface SettleOptions {
  /** Consecutive macrotask turns without any activity that count as settled (3). */
  readonly quietTurns?: number
  /** Rejects when the fake is still busy after this long, in real ms (2000). */
  readonly timeoutMs?: number
  /** More work the caller knows of (hooks in flight); settled only while it answers false. */
  readonly busy?: () => boolean
}

/** An in-memory API server; see the module documentation for what it models. */
export class FakeCluster implements ObjectClient {
  readonly #store: FakeStore
  readonly #injections = new FakeInjections()
  readonly #pages = new FakeListPages()
  readonly #writes: FakeWrite[] = []
  #closed = false
  /** Counts calls and delivered watch events; {@link FakeCluster.settle} waits for it to rest. */
  #activity = 0

  constructor(options: FakeClusterOptions = {}) {
    this.#store = new FakeStore(options.clock ?? systemClock, options.garbageCollection ?? false)
  }

  /** The current (latest) resourceVersion. */
  get resourceVersion(): string {
    return String(this.#store.rv)
  }

  /** Every write request made so far, in order. */
  get writes(): readonly FakeWrite[] {
    return [...this.#writes]
  }

  /** Forgets the recorded writes, e.g. once a test's setup is done. */
  clearWrites(): void {
    this.#writes.length = 0
  }

  /**
   * Declares a resource; needed only to turn its status subresource off (undeclared resources
   * are created on first use, with one). Must come before the resource is used.
   */
  defineResource(ref: ResourceRef, options: { readonly statusSubresource: boolean }): void {
    this.#store.defineResource(ref, options)
  }

  /**
   * Stores an object as given, without a client call: its UID, resourceVersion, timestamps,
   * status and finalizers are kept (a missing UID or resourceVersion is assigned), so a cluster
   * can start from objects read from a real one (`metactl render` seeds it from files). Later
   * resourceVersions are above every numeric one seeded.
   *
   * @throws Error when the object has no name, or a namespaced one no namespace.
   */
  seed(ref: ResourceRef, object: KubeObject): KubeObject {
    return this.#store.seed(ref, object)
  }

  /** Makes the next `times` calls matching `match` fail with `error` (see `fakeApiError`). */
  failNext(match: FakeCallMatch, error: Error, times = 1): void {
    this.#injections.add(match, error, times)
  }

  /** Reads an object without going through (or being recorded as) a client call. */
  peek(ref: ResourceRef, name: string, namespace?: string): KubeObject | undefined {
    const stored = this.#store.collection(ref).objects.get(keyOf(namespace, name))
    return stored === undefined ? undefined : structuredClone(stored)
  }

  /** Every stored object of a resource, sorted by key, without a client call. */
  objects(ref: ResourceRef): KubeObject[] {
    return sortedByKey(this.#store.collection(ref).objects).map((o) => structuredClone(o))
  }

  get(ref: ResourceRef, name: string, options: ObjectCallOptions = {}): Promise<KubeObject> {
    return this.#call(() => {
      this.#injections.throwIfMatched({
        method: 'get',
        resource: ref.resource,
        name,
        namespace: options.namespace,
      })
      return structuredClone(this.#store.require(ref, name, options.namespace))
    })
  }

  create(ref: ResourceRef, object: KubeObject, options: WriteOptions = {}): Promise<KubeObject> {
    const namespace = ref.namespaced ? (options.namespace ?? object.metadata.namespace) : undefined
    return this.#write('create', ref, object.metadata.name ?? '', namespace, () =>
      this.#store.createObject(ref, object, namespace, options.dryRun === true)
    )
  }

  update(ref: ResourceRef, object: KubeObject, options: WriteOptions = {}): Promise<KubeObject> {
    const namespace = this.#namespace(ref, object, options)
    return this.#write('update', ref, object.metadata.name ?? '', namespace, () =>
      this.#store.replaceObject(ref, object, namespace, 'main', options.dryRun === true)
    )
  }

  updateStatus(
    ref: ResourceRef,
    object: KubeObject,
    options: WriteOptions = {}
  ): Promise<KubeObject> {
    const namespace = this.#namespace(ref, object, options)
    return this.#write('updateStatus', ref, object.metadata.name ?? '', namespace, () =>
      this.#store.replaceObject(ref, object, namespace, 'status', options.dryRun === true)
    )
  }

  delete(ref: ResourceRef, name: string, options: DeleteOptions = {}): Promise<unknown> {
    const namespace = ref.namespaced ? options.namespace : undefined
    const preconditions = options.preconditions
    return this.#write(
      'delete',
      ref,
      name,
      namespace,
      () => this.#store.deleteObject(ref, name, namespace, options),
      preconditions === undefined ? {} : { preconditions }
    )
  }

  /** Builds {@link ListWatcher}s over this cluster: pass it to `new SharedInformers(...)`. */
  listWatcherFactory(): ListWatcherFactory {
    return (ref, scope) => this.#listWatcher(ref, scope)
  }

  /**
   * Drops the change history: a watch from an older resourceVersion then gets a 410 `ERROR`
   * event, and its informer relists (as after etcd compaction).
   */
  compact(): void {
    this.#store.compact()
  }

  /**
   * Shuts the server down: open watches end and every later call fails with a 503, so that a
   * controller caught in a write loop stops writing and can be stopped promptly.
   */
  close(): void {
    this.#closed = true
    this.closeWatches()
  }

  /** Ends every open watch, as a server timeout does; informers then watch again. */
  closeWatches(): void {
    for (const collection of this.#store.collections.values()) {
      for (const watch of collection.watches) watch.channel.close()
      collection.watches.clear()
    }
  }

  /**
   * Resolves once nothing happens any more: no call and no watch event delivered for
   * `quietTurns` consecutive macrotask turns, no event waiting in a watch, and `busy()` false.
   *
   * @remarks
   * Deterministic for work driven by promises (watch delivery, informer handlers, work queue
   * hand-offs, in-process hooks, writes): each turn lets every pending microtask run. Work
   * waiting on a timer (a delayed requeue, a retry back-off) is not awaited.
   *
   * @throws Error when still busy after `timeoutMs`.
   */
  async settle(options: SettleOptions = {}): Promise<void> {
    const quietTurns = options.quietTurns ?? 3
    const timeoutMs = options.timeoutMs ?? 2000
    const deadline = performance.now() + timeoutMs
    let seen = this.#activity
    let quiet = 0
    while (quiet < quietTurns) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      const pending = this.#pendingEvents() > 0 || options.busy?.() === true
      if (pending || this.#activity !== seen) {
        seen = this.#activity
        quiet = 0
      } else {
        quiet++
      }
      if (performance.now() > deadline) {
        throw new Error(`fake cluster did not settle within ${timeoutMs} ms`)
      }
    }
  }

  #pendingEvents(): number {
    let pending = 0
    for (const collection of this.#store.collections.values()) {
      for (const watch of collection.watches) pending += watch.channel.pending
    }
    return pending
  }

  #namespace(ref: ResourceRef, object: KubeObject, options: ObjectCallOptions): string | undefined {
    return ref.namespaced ? (options.namespace ?? object.metadata.namespace) : undefined
  }

  /**
   * Runs a call on a later macrotask, as a real request completes on network I/O, and counts it
   * as activity.
   *
   * @remarks
   * Resolving on a microtask would let a controller caught in a write loop (write, watch event,
   * sync, write) starve timers and `setImmediate`, hanging the test process instead of failing it.
   */
  #call<T>(run: () => T): Promise<T> {
    this.#activity++
    return new Promise<T>((resolve, reject) => {
      setImmediate(() => {
        try {
          if (this.#closed) throw fakeApiError('ServiceUnavailable', 'the fake cluster is closed')
          resolve(run())
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)))
        }
      })
    })
  }

  /** Runs a write call and records it, with the error it failed with. */
  #write<T>(
    method: FakeWriteMethod,
    ref: ResourceRef,
    name: string,
    namespace: string | undefined,
    run: () => T,
    extra: Pick<FakeWrite, 'preconditions'> = {}
  ): Promise<T> {
    return this.#call(() => {
      const record = { method, resource: ref.resource, namespace, name, ...extra }
      try {
        this.#injections.throwIfMatched({ method, resource: ref.resource, name, namespace })
        const result = run()
        this.#writes.push(record)
        return result
      } catch (error) {
        this.#writes.push({ ...record, error: error instanceof Error ? error.name : 'Error' })
        throw error
      }
    })
  }

  #listWatcher(ref: ResourceRef, scope: ListWatchScope): ListWatcher {
    const matches = compileScope(scope)
    const group = ref.group === '' ? '' : `.${ref.group}`
    const where = scope.namespace === undefined ? '' : ` in ${scope.namespace}`
    return {
      description: `${ref.resource}.${ref.version}${group}${where} (fake)`,
      listPage: (options) =>
        this.#call(() => {
          this.#injections.throwIfMatched({
            method: 'list',
            resource: ref.resource,
            namespace: scope.namespace,
          })
          const objects = (): KubeObject[] =>
            sortedByKey(this.#store.collection(ref).objects).filter(matches)
          const expired = (): Error =>
            this.#store.error(
              'Expired',
              'the provided continue parameter is too old',
              'LIST',
              ref.resource
            )
          return this.#pages.page(objects, this.#store.rv, options, expired)
        }),
      watch: (options) =>
        this.#call(() => {
          this.#injections.throwIfMatched({
            method: 'watch',
            resource: ref.resource,
            namespace: scope.namespace,
          })
          return this.#watch(ref, matches, Number(options.resourceVersion), options.signal)
        }),
    }
  }

  #watch(ref: ResourceRef, matches: ScopeMatcher, from: number, signal: AbortSignal): WatchChannel {
    const collection = this.#store.collection(ref)
    const channel = new WatchChannel(signal, () => {
      this.#activity++
    })
    if (!Number.isFinite(from) || from < this.#store.compactedRv) {
      const status = {
        kind: 'Status',
        code: 410,
        reason: 'Expired',
        message: 'too old resource version',
      }
      channel.push({ type: 'ERROR', object: status as unknown as KubeObject })
      return channel
    }
    for (const change of collection.history) {
      if (change.rv <= from) continue
      const event = scopedEvent(change.type, change.object, change.old, matches)
      if (event !== undefined) channel.push(event)
    }
    collection.watches.add({ channel, matches })
    return channel
  }
}
