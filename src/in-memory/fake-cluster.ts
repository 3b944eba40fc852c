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
import { isDeepStrictEqual } from 'node:util'
import type { KubeList, KubeObject } from '../core/kube-object.js'
import { isDeleting } from '../core/owner-references.js'
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
import type { FakeErrorReason } from './fake-api-error.js'
import { compileScope, scopedEvent, WatchChannel } from './fake-watch.js'
import type { ScopeMatcher } from './fake-watch.js'
import { keyOf } from '../core/object-key.js'

/** A call the fake serves, for error injection. */
export type FakeMethod = FakeWriteMethod | 'get' | 'list' | 'watch'

/** A call that writes, as recorded in {@link FakeCluster.writes}. */
export type FakeWriteMethod = 'create' | 'update' | 'updateStatus' | 'delete'

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

/** Which calls an injected error applies to; an absent field matches anything. */
export interface FakeCallMatch {
  readonly method: FakeMethod
  /** Plural resource name. */
  readonly resource?: string
  readonly name?: string
  readonly namespace?: string
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

type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED'

interface Change {
  readonly rv: number
  readonly type: ChangeType
  readonly object: KubeObject
  readonly old: KubeObject | undefined
}

interface OpenWatch {
  readonly channel: WatchChannel
  readonly matches: ScopeMatcher
}

interface Collection {
  readonly ref: ResourceRef
  readonly statusSubresource: boolean
  readonly objects: Map<string, KubeObject>
  history: Change[]
  readonly watches: Set<OpenWatch>
}

interface Injection {
  readonly match: FakeCallMatch
  readonly error: Error
  remaining: number
}

interface ListSnapshot {
  readonly items: KubeObject[]
  readonly rv: number
  readonly offset: number
}

/** Options of the internal delete, shared by clients and the garbage collector. */
interface DeleteRequest {
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string }
  readonly dryRun?: boolean
}

/** The objects of a store in key order: lists are sorted, as the real server's are. */
function sortedByKey(objects: ReadonlyMap<string, KubeObject>): KubeObject[] {
  return [...objects.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, object]) => object)
}

/** The object without the fields that do not count as a spec change. */
function specPart(object: KubeObject): Record<string, unknown> {
  const rest: Record<string, unknown> = { ...object }
  delete rest['metadata']
  delete rest['status']
  return rest
}

/**
 * Drops empty label, annotation, finalizer and owner lists, as the real server's serialization
 * does (Go `omitempty`), so that `labels: {}` and no labels are the same stored object (and not
 * a change).
 */
function normalizeMetadata(object: KubeObject): KubeObject {
  const metadata = object.metadata
  const isEmpty = (value: object | undefined): boolean =>
    value !== undefined && Object.keys(value).length === 0
  if (isEmpty(metadata.labels)) delete metadata.labels
  if (isEmpty(metadata.annotations)) delete metadata.annotations
  if (isEmpty(metadata.finalizers)) delete metadata.finalizers
  if (isEmpty(metadata.ownerReferences)) delete metadata.ownerReferences
  return object
}

function withoutVersion(object: KubeObject): KubeObject {
  const metadata = { ...object.metadata }
  delete metadata.resourceVersion
  return { ...object, metadata }
}

/** An in-memory API server; see the module documentation for what it models. */
export class FakeCluster implements ObjectClient {
  readonly #clock: Clock
  readonly #gc: boolean
  readonly #collections = new Map<string, Collection>()
  readonly #injections: Injection[] = []
  readonly #snapshots = new Map<string, ListSnapshot>()
  readonly #writes: FakeWrite[] = []
  #rv = 0
  #uids = 0
  #tokens = 0
  #generated = 0
  #closed = false
  /** Counts calls and delivered watch events; {@link FakeCluster.settle} waits for it to rest. */
  #activity = 0
  /** Watches from before this resourceVersion are answered with 410 (see {@link compact}). */
  #compactedRv = 0

  constructor(options: FakeClusterOptions = {}) {
    this.#clock = options.clock ?? systemClock
    this.#gc = options.garbageCollection ?? false
  }

  /** The current (latest) resourceVersion. */
  get resourceVersion(): string {
    return String(this.#rv)
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
    const id = `${ref.group}/${ref.resource}`
    if (this.#collections.has(id)) throw new Error(`fake cluster: ${id} is already in use`)
    this.#collections.set(id, {
      ref,
      statusSubresource: options.statusSubresource,
      objects: new Map(),
      history: [],
      watches: new Set(),
    })
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
    const collection = this.#collection(ref)
    const stored = normalizeMetadata(structuredClone(object))
    const metadata = stored.metadata
    const name = metadata.name ?? ''
    const namespace = ref.namespaced ? (metadata.namespace ?? '') : undefined
    if (name === '' || namespace === '') {
      throw new Error(
        `fake cluster: cannot seed ${ref.resource} "${name}" without a name and namespace`
      )
    }
    if (!ref.namespaced) delete metadata.namespace
    if (metadata.uid === undefined || metadata.uid === '') metadata.uid = `uid-${++this.#uids}`
    const given = Number(metadata.resourceVersion)
    if (Number.isSafeInteger(given) && given > this.#rv) this.#rv = given
    if (metadata.resourceVersion === undefined || metadata.resourceVersion === '') {
      metadata.resourceVersion = String(++this.#rv)
    }
    collection.objects.set(keyOf(namespace, name), stored)
    return structuredClone(stored)
  }

  /** Makes the next `times` calls matching `match` fail with `error` (see `fakeApiError`). */
  failNext(match: FakeCallMatch, error: Error, times = 1): void {
    this.#injections.push({ match, error, remaining: times })
  }

  /** Reads an object without going through (or being recorded as) a client call. */
  peek(ref: ResourceRef, name: string, namespace?: string): KubeObject | undefined {
    const stored = this.#collection(ref).objects.get(keyOf(namespace, name))
    return stored === undefined ? undefined : structuredClone(stored)
  }

  /** Every stored object of a resource, sorted by key, without a client call. */
  objects(ref: ResourceRef): KubeObject[] {
    return sortedByKey(this.#collection(ref).objects).map((o) => structuredClone(o))
  }

  get(ref: ResourceRef, name: string, options: ObjectCallOptions = {}): Promise<KubeObject> {
    return this.#call(() => {
      this.#inject({ method: 'get', resource: ref.resource, name, namespace: options.namespace })
      return structuredClone(this.#require(ref, name, options.namespace))
    })
  }

  create(ref: ResourceRef, object: KubeObject, options: WriteOptions = {}): Promise<KubeObject> {
    const namespace = ref.namespaced ? (options.namespace ?? object.metadata.namespace) : undefined
    return this.#write('create', ref, object.metadata.name ?? '', namespace, () =>
      this.#create(ref, object, namespace, options.dryRun === true)
    )
  }

  update(ref: ResourceRef, object: KubeObject, options: WriteOptions = {}): Promise<KubeObject> {
    const namespace = this.#namespace(ref, object, options)
    return this.#write('update', ref, object.metadata.name ?? '', namespace, () =>
      this.#replace(ref, object, namespace, 'main', options.dryRun === true)
    )
  }

  updateStatus(
    ref: ResourceRef,
    object: KubeObject,
    options: WriteOptions = {}
  ): Promise<KubeObject> {
    const namespace = this.#namespace(ref, object, options)
    return this.#write('updateStatus', ref, object.metadata.name ?? '', namespace, () =>
      this.#replace(ref, object, namespace, 'status', options.dryRun === true)
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
      () => this.#delete(ref, name, namespace, options),
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
    this.#compactedRv = this.#rv
    for (const collection of this.#collections.values()) collection.history = []
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
    for (const collection of this.#collections.values()) {
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
    for (const collection of this.#collections.values()) {
      for (const watch of collection.watches) pending += watch.channel.pending
    }
    return pending
  }

  #collection(ref: ResourceRef): Collection {
    const id = `${ref.group}/${ref.resource}`
    let collection = this.#collections.get(id)
    if (collection === undefined) {
      collection = {
        ref,
        statusSubresource: true,
        objects: new Map(),
        history: [],
        watches: new Set(),
      }
      this.#collections.set(id, collection)
    }
    return collection
  }

  #namespace(ref: ResourceRef, object: KubeObject, options: ObjectCallOptions): string | undefined {
    return ref.namespaced ? (options.namespace ?? object.metadata.namespace) : undefined
  }

  #path(ref: ResourceRef, namespace: string | undefined, name: string): string {
    const group = ref.group === '' ? 'api' : `apis/${ref.group}`
    const ns = namespace === undefined ? '' : `/namespaces/${namespace}`
    return `/${group}/${ref.version}${ns}/${ref.resource}/${name}`
  }

  #error(reason: FakeErrorReason, message: string, method: string, path: string): Error {
    return fakeApiError(reason, message, { method, path })
  }

  #require(ref: ResourceRef, name: string, namespace: string | undefined): KubeObject {
    const stored = this.#collection(ref).objects.get(keyOf(namespace, name))
    if (stored === undefined) {
      const what = `${ref.resource}${ref.group === '' ? '' : `.${ref.group}`}`
      throw this.#error(
        'NotFound',
        `${what} "${name}" not found`,
        'GET',
        this.#path(ref, namespace, name)
      )
    }
    return stored
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
        this.#inject({ method, resource: ref.resource, name, namespace })
        const result = run()
        this.#writes.push(record)
        return result
      } catch (error) {
        this.#writes.push({ ...record, error: error instanceof Error ? error.name : 'Error' })
        throw error
      }
    })
  }

  #inject(call: {
    method: FakeMethod
    resource: string
    name?: string
    namespace: string | undefined
  }): void {
    const index = this.#injections.findIndex(
      ({ match }) =>
        match.method === call.method &&
        (match.resource === undefined || match.resource === call.resource) &&
        (match.name === undefined || match.name === call.name) &&
        (match.namespace === undefined || match.namespace === call.namespace)
    )
    const injection = this.#injections[index]
    if (injection === undefined) return
    if (--injection.remaining <= 0) this.#injections.splice(index, 1)
    throw injection.error
  }

  #create(
    ref: ResourceRef,
    object: KubeObject,
    namespace: string | undefined,
    dryRun: boolean
  ): KubeObject {
    const collection = this.#collection(ref)
    let name = object.metadata.name ?? ''
    if (name === '' && object.metadata.generateName !== undefined) {
      name = `${object.metadata.generateName}${(++this.#generated).toString(36).padStart(5, '0')}`
    }
    const path = this.#path(ref, namespace, name)
    if (name === '') throw this.#error('Invalid', 'metadata.name: Required value', 'POST', path)
    if (ref.namespaced && (namespace === undefined || namespace === '')) {
      throw this.#error('BadRequest', 'the namespace of the object is required', 'POST', path)
    }
    const key = keyOf(namespace, name)
    if (collection.objects.has(key)) {
      throw this.#error('AlreadyExists', `${ref.resource} "${name}" already exists`, 'POST', path)
    }
    const stored = normalizeMetadata(structuredClone(object))
    const metadata = stored.metadata
    delete metadata.deletionTimestamp
    delete metadata.resourceVersion
    metadata.name = name
    if (namespace === undefined) delete metadata.namespace
    else metadata.namespace = namespace
    metadata.uid = `uid-${++this.#uids}`
    metadata.generation = 1
    metadata.creationTimestamp = this.#timestamp()
    // The status subresource's contract: status is the controller's, not the creator's.
    if (collection.statusSubresource) delete stored['status']
    if (dryRun) return stored
    return this.#commit(collection, key, 'ADDED', stored, undefined)
  }

  #replace(
    ref: ResourceRef,
    object: KubeObject,
    namespace: string | undefined,
    part: 'main' | 'status',
    dryRun: boolean
  ): KubeObject {
    const collection = this.#collection(ref)
    const name = object.metadata.name ?? ''
    const method = part === 'status' ? 'PUT status' : 'PUT'
    const path = this.#path(ref, namespace, name)
    if (part === 'status' && !collection.statusSubresource) {
      throw this.#error('NotFound', `${ref.resource} has no status subresource`, method, path)
    }
    const current = this.#require(ref, name, namespace)
    this.#checkPreconditions(current, object.metadata, method, path)
    const next =
      part === 'status'
        ? this.#statusUpdate(current, object)
        : this.#mainUpdate(collection, current, object, method, path)
    // A write that changes nothing is not stored: no new resourceVersion, no watch event.
    if (isDeepStrictEqual(withoutVersion(next), withoutVersion(current))) {
      return structuredClone(current)
    }
    if (dryRun) return next
    const key = keyOf(namespace, name)
    if (isDeleting(next) && (next.metadata.finalizers ?? []).length === 0) {
      return this.#remove(collection, key, next)
    }
    return this.#commit(collection, key, 'MODIFIED', next, current)
  }

  #checkPreconditions(
    current: KubeObject,
    given: { readonly uid?: string | undefined; readonly resourceVersion?: string | undefined },
    method: string,
    path: string
  ): void {
    const { uid, resourceVersion } = given
    if (uid !== undefined && uid !== '' && uid !== current.metadata.uid) {
      const message = `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata.uid ?? ''}`
      throw this.#error('Conflict', message, method, path)
    }
    if (
      resourceVersion !== undefined &&
      resourceVersion !== '' &&
      resourceVersion !== current.metadata.resourceVersion
    ) {
      const message =
        'the object has been modified; please apply your changes to the latest version and try again'
      throw this.#error('Conflict', `Operation cannot be fulfilled: ${message}`, method, path)
    }
  }

  /** The object an update stores: the client's, with server-owned metadata and status kept. */
  #mainUpdate(
    collection: Collection,
    current: KubeObject,
    object: KubeObject,
    method: string,
    path: string
  ): KubeObject {
    const next = normalizeMetadata(structuredClone(object))
    const meta = next.metadata
    const { uid, creationTimestamp, deletionTimestamp, generation, name, namespace } =
      current.metadata
    Object.assign(meta, { uid, creationTimestamp, name, generation })
    if (namespace === undefined) delete meta.namespace
    else meta.namespace = namespace
    if (deletionTimestamp === undefined) delete meta.deletionTimestamp
    else meta.deletionTimestamp = deletionTimestamp
    meta.resourceVersion = current.metadata.resourceVersion ?? ''
    if (collection.statusSubresource) {
      if (current['status'] === undefined) delete next['status']
      else next['status'] = structuredClone(current['status'])
    }
    if (isDeleting(current)) {
      const before = current.metadata.finalizers ?? []
      if ((meta.finalizers ?? []).some((f) => !before.includes(f))) {
        const message =
          'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted'
        throw this.#error('Invalid', message, method, path)
      }
    }
    if (!isDeepStrictEqual(specPart(next), specPart(current))) {
      meta.generation = (generation ?? 0) + 1
    }
    return next
  }

  /** The object a status update stores: the stored one with only the status replaced. */
  #statusUpdate(current: KubeObject, object: KubeObject): KubeObject {
    const next = structuredClone(current)
    if (object['status'] === undefined) delete next['status']
    else next['status'] = structuredClone(object['status'])
    return next
  }

  #delete(
    ref: ResourceRef,
    name: string,
    namespace: string | undefined,
    request: DeleteRequest
  ): KubeObject {
    const collection = this.#collection(ref)
    const path = this.#path(ref, namespace, name)
    const current = this.#require(ref, name, namespace)
    this.#checkPreconditions(current, request.preconditions ?? {}, 'DELETE', path)
    const key = keyOf(namespace, name)
    if ((current.metadata.finalizers ?? []).length === 0) {
      return request.dryRun === true
        ? structuredClone(current)
        : this.#remove(collection, key, structuredClone(current))
    }
    if (isDeleting(current) || request.dryRun === true) return structuredClone(current)
    const next = structuredClone(current)
    next.metadata.deletionTimestamp = this.#timestamp()
    // The real server bumps the generation when it starts a graceful deletion.
    next.metadata.generation = (current.metadata.generation ?? 0) + 1
    return this.#commit(collection, key, 'MODIFIED', next, current)
  }

  /** Stores a change under a new resourceVersion and tells the watches; returns a copy. */
  #commit(
    collection: Collection,
    key: string,
    type: ChangeType,
    object: KubeObject,
    old: KubeObject | undefined
  ): KubeObject {
    const rv = ++this.#rv
    object.metadata.resourceVersion = String(rv)
    if (type === 'DELETED') collection.objects.delete(key)
    else collection.objects.set(key, object)
    const change: Change = { rv, type, object, old }
    collection.history.push(change)
    for (const watch of collection.watches) {
      if (watch.channel.closed) {
        collection.watches.delete(watch)
        continue
      }
      const event = scopedEvent(type, object, old, watch.matches)
      if (event !== undefined) watch.channel.push(event)
    }
    return structuredClone(object)
  }

  #remove(collection: Collection, key: string, last: KubeObject): KubeObject {
    const old = collection.objects.get(key)
    const removed = this.#commit(collection, key, 'DELETED', last, old)
    if (this.#gc) this.#collectDependents()
    return removed
  }

  /** Background cascade: deletes objects whose every owner UID is gone. */
  #collectDependents(): void {
    const live = new Set<string>()
    for (const collection of this.#collections.values()) {
      for (const object of collection.objects.values()) live.add(object.metadata.uid ?? '')
    }
    for (const collection of this.#collections.values()) {
      for (const object of [...collection.objects.values()]) {
        const owners = object.metadata.ownerReferences ?? []
        if (owners.length === 0 || owners.some((o) => live.has(o.uid)) || isDeleting(object))
          continue
        const { name = '', namespace } = object.metadata
        // A nested pass (this delete's own cascade) may have removed it already.
        if (!collection.objects.has(keyOf(namespace, name))) continue
        // Recursion ends: every pass removes objects or only marks them as deleting.
        this.#delete(collection.ref, name, namespace, {})
      }
    }
  }

  #timestamp(): string {
    return new Date(this.#clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z')
  }

  #listWatcher(ref: ResourceRef, scope: ListWatchScope): ListWatcher {
    const matches = compileScope(scope)
    const group = ref.group === '' ? '' : `.${ref.group}`
    const where = scope.namespace === undefined ? '' : ` in ${scope.namespace}`
    return {
      description: `${ref.resource}.${ref.version}${group}${where} (fake)`,
      listPage: (options) =>
        this.#call(() => {
          this.#inject({ method: 'list', resource: ref.resource, namespace: scope.namespace })
          return this.#listPage(ref, matches, options.limit, options.continue)
        }),
      watch: (options) =>
        this.#call(() => {
          this.#inject({ method: 'watch', resource: ref.resource, namespace: scope.namespace })
          return this.#watch(ref, matches, Number(options.resourceVersion), options.signal)
        }),
    }
  }

  #listPage(
    ref: ResourceRef,
    matches: ScopeMatcher,
    limit: number,
    token: string | undefined
  ): KubeList {
    let snapshot: ListSnapshot
    if (token === undefined) {
      const items = sortedByKey(this.#collection(ref).objects).filter(matches)
      snapshot = { items: items.map((o) => structuredClone(o)), rv: this.#rv, offset: 0 }
    } else {
      const found = this.#snapshots.get(token)
      if (found === undefined) {
        throw this.#error(
          'Expired',
          'the provided continue parameter is too old',
          'LIST',
          ref.resource
        )
      }
      this.#snapshots.delete(token)
      snapshot = found
    }
    const end = snapshot.offset + Math.max(1, limit)
    const metadata: KubeList['metadata'] = { resourceVersion: String(snapshot.rv) }
    if (end < snapshot.items.length) {
      const next = `fake-continue-${++this.#tokens}`
      this.#snapshots.set(next, { ...snapshot, offset: end })
      metadata.continue = next
    }
    return {
      apiVersion: 'v1',
      kind: 'List',
      metadata,
      items: snapshot.items.slice(snapshot.offset, end),
    }
  }

  #watch(ref: ResourceRef, matches: ScopeMatcher, from: number, signal: AbortSignal): WatchChannel {
    const collection = this.#collection(ref)
    const channel = new WatchChannel(signal, () => {
      this.#activity++
    })
    if (!Number.isFinite(from) || from < this.#compactedRv) {
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
