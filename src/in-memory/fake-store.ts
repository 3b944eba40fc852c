/**
 * The store of the in-memory API server (`FakeCluster`): its collections, resourceVersions
 * and UIDs, and the semantics of its writes (optimistic concurrency, preconditions, graceful
 * deletion, the status subresource, generation, garbage collection). Every change is committed
 * here and fanned out to the collection's open watches; the cluster adds the client calls, error
 * injection, paging and watches on top.
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { KubeObject } from '../core/kube-object.js'
import { keyOf } from '../core/object-key.js'
import { isDeleting } from '../core/owner-references.js'
import type { ResourceRef } from '../kube/dynamic-client.js'
import type { Clock } from '../runtime/clock/clock.js'
import { fakeApiError } from './fake-api-error.js'
import type { FakeErrorReason } from './fake-api-error.js'
import { scopedEvent } from './fake-watch.js'
import type { Change, ChangeType, Collection } from './fake-collection.js'

/** Options of the internal delete, shared by clients and the garbage collector. */
interface DeleteRequest {
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string }
  readonly dryRun?: boolean
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

/** The object without its resourceVersion, to compare two versions of it. */
function withoutVersion(object: KubeObject): KubeObject {
  const metadata = { ...object.metadata }
  delete metadata.resourceVersion
  return { ...object, metadata }
}

/** The objects of the in-memory API server and the semantics of writing them. */
export class FakeStore {
  /** The collections, by `group/resource`. */
  readonly collections: Map<string, Collection> = new Map()
  /** The current (latest) resourceVersion. */
  rv = 0
  /** Watches from before this resourceVersion are answered with 410 (see {@link FakeStore.compact}). */
  compactedRv = 0
  readonly #clock: Clock
  readonly #gc: boolean
  #uids = 0
  #generated = 0

  /** A store on `clock`, deleting orphaned dependents when `gc` is set. */
  constructor(clock: Clock, gc: boolean) {
    this.#clock = clock
    this.#gc = gc
  }

  /**
   * Declares a resource; needed only to turn its status subresource off (undeclared resources
   * are created on first use, with one). Must come before the resource is used.
   */
  defineResource(ref: ResourceRef, options: { readonly statusSubresource: boolean }): void {
    const id = `${ref.group}/${ref.resource}`
    if (this.collections.has(id)) throw new Error(`fake cluster: ${id} is already in use`)
    this.collections.set(id, {
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
    const collection = this.collection(ref)
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
    if (Number.isSafeInteger(given) && given > this.rv) this.rv = given
    if (metadata.resourceVersion === undefined || metadata.resourceVersion === '') {
      metadata.resourceVersion = String(++this.rv)
    }
    collection.objects.set(keyOf(namespace, name), stored)
    return structuredClone(stored)
  }

  /**
   * Drops the change history: a watch from an older resourceVersion then gets a 410 `ERROR`
   * event, and its informer relists (as after etcd compaction).
   */
  compact(): void {
    this.compactedRv = this.rv
    for (const collection of this.collections.values()) collection.history = []
  }

  /** The collection of a resource, created (with a status subresource) on first use. */
  collection(ref: ResourceRef): Collection {
    const id = `${ref.group}/${ref.resource}`
    let collection = this.collections.get(id)
    if (collection === undefined) {
      collection = {
        ref,
        statusSubresource: true,
        objects: new Map(),
        history: [],
        watches: new Set(),
      }
      this.collections.set(id, collection)
    }
    return collection
  }

  /** The request path of an object, as errors name it. */
  path(ref: ResourceRef, namespace: string | undefined, name: string): string {
    const group = ref.group === '' ? 'api' : `apis/${ref.group}`
    const ns = namespace === undefined ? '' : `/namespaces/${namespace}`
    return `/${group}/${ref.version}${ns}/${ref.resource}/${name}`
  }

  /** The API error a real server would answer with. */
  error(reason: FakeErrorReason, message: string, method: string, path: string): Error {
    return fakeApiError(reason, message, { method, path })
  }

  /** The stored object (not a copy). @throws A `NotFoundError` when there is none. */
  require(ref: ResourceRef, name: string, namespace: string | undefined): KubeObject {
    const stored = this.collection(ref).objects.get(keyOf(namespace, name))
    if (stored === undefined) {
      const what = `${ref.resource}${ref.group === '' ? '' : `.${ref.group}`}`
      throw this.error(
        'NotFound',
        `${what} "${name}" not found`,
        'GET',
        this.path(ref, namespace, name)
      )
    }
    return stored
  }

  /** Creates an object, as a create call does (nothing is stored on a dry run). */
  createObject(
    ref: ResourceRef,
    object: KubeObject,
    namespace: string | undefined,
    dryRun: boolean
  ): KubeObject {
    const collection = this.collection(ref)
    let name = object.metadata.name ?? ''
    if (name === '' && object.metadata.generateName !== undefined) {
      name = `${object.metadata.generateName}${(++this.#generated).toString(36).padStart(5, '0')}`
    }
    const path = this.path(ref, namespace, name)
    if (name === '') throw this.error('Invalid', 'metadata.name: Required value', 'POST', path)
    if (ref.namespaced && (namespace === undefined || namespace === '')) {
      throw this.error('BadRequest', 'the namespace of the object is required', 'POST', path)
    }
    const key = keyOf(namespace, name)
    if (collection.objects.has(key)) {
      throw this.error('AlreadyExists', `${ref.resource} "${name}" already exists`, 'POST', path)
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

  /** Replaces an object's main part or status, as an update or updateStatus call does. */
  replaceObject(
    ref: ResourceRef,
    object: KubeObject,
    namespace: string | undefined,
    part: 'main' | 'status',
    dryRun: boolean
  ): KubeObject {
    const collection = this.collection(ref)
    const name = object.metadata.name ?? ''
    const method = part === 'status' ? 'PUT status' : 'PUT'
    const path = this.path(ref, namespace, name)
    if (part === 'status' && !collection.statusSubresource) {
      throw this.error('NotFound', `${ref.resource} has no status subresource`, method, path)
    }
    const current = this.require(ref, name, namespace)
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
      throw this.error('Conflict', message, method, path)
    }
    if (
      resourceVersion !== undefined &&
      resourceVersion !== '' &&
      resourceVersion !== current.metadata.resourceVersion
    ) {
      const message =
        'the object has been modified; please apply your changes to the latest version and try again'
      throw this.error('Conflict', `Operation cannot be fulfilled: ${message}`, method, path)
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
        throw this.error('Invalid', message, method, path)
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

  /** Deletes an object, or marks it deleting while it has finalizers, as a delete call does. */
  deleteObject(
    ref: ResourceRef,
    name: string,
    namespace: string | undefined,
    request: DeleteRequest
  ): KubeObject {
    const collection = this.collection(ref)
    const path = this.path(ref, namespace, name)
    const current = this.require(ref, name, namespace)
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
    const rv = ++this.rv
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
    for (const collection of this.collections.values()) {
      for (const object of collection.objects.values()) live.add(object.metadata.uid ?? '')
    }
    for (const collection of this.collections.values()) {
      for (const object of [...collection.objects.values()]) {
        const owners = object.metadata.ownerReferences ?? []
        if (owners.length === 0 || owners.some((o) => live.has(o.uid)) || isDeleting(object))
          continue
        const { name = '', namespace } = object.metadata
        // A nested pass (this delete's own cascade) may have removed it already.
        if (!collection.objects.has(keyOf(namespace, name))) continue
        // Recursion ends: every pass removes objects or only marks them as deleting.
        this.deleteObject(collection.ref, name, namespace, {})
      }
    }
  }

  #timestamp(): string {
    return new Date(this.#clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z')
  }
}
