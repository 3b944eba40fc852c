import type { KubeObject } from '../core/kube-object.js'
import { namespaceOf, objectKey } from '../core/object-key.js'

/** Returns the UID of the object's controller owner reference, if it has one. */
export function controllerUid(object: KubeObject): string | undefined {
  return object.metadata.ownerReferences?.find((ref) => ref.controller === true)?.uid
}

/**
 * A read handle on an informer's cache, with indexes by namespace, by controller-owner UID and of
 * orphans (objects without a controller reference) per namespace.
 *
 * @remarks
 * **Caveats** Returned objects are the cached ones, not copies: treat them as read-only (clone
 * with `structuredClone` before changing one).
 */
export interface ObjectReader<T extends KubeObject = KubeObject> {
  /** Returns the object with this `namespace/name` (or `name`) key. */
  get(key: string): T | undefined
  /** Returns every cached object. */
  list(): T[]
  /** Returns the objects in one namespace; cluster-scoped objects are in none. */
  listByNamespace(namespace: string): T[]
  /** Returns the objects whose controller owner reference has this UID. */
  listByControllerUid(uid: string): T[]
  /**
   * Returns the objects without a controller owner reference: those of one namespace (`''`:
   * the cluster-scoped ones), or of every namespace and the cluster scope when none is given.
   */
  listOrphans(namespace?: string): T[]
  /** Number of cached objects. */
  readonly size: number
}

function addToIndex(index: Map<string, Set<string>>, value: string | undefined, key: string): void {
  if (value === undefined) return
  let keys = index.get(value)
  if (keys === undefined) {
    keys = new Set()
    index.set(value, keys)
  }
  keys.add(key)
}

function removeFromIndex(
  index: Map<string, Set<string>>,
  value: string | undefined,
  key: string
): void {
  if (value === undefined) return
  const keys = index.get(value)
  keys?.delete(key)
  if (keys?.size === 0) index.delete(value)
}

/** The index values an object was filed under, kept so that removal never recomputes them. */
interface Entry<T> {
  readonly object: T
  readonly namespace: string | undefined
  readonly controllerUid: string | undefined
  /** No controller reference at all (one without a UID is still a controller reference). */
  readonly orphan: boolean
}

/** The orphan index files cluster-scoped objects under this namespace, which no namespace has. */
const CLUSTER_SCOPE = ''

/**
 * The cache an informer writes to; keeps its indexes in step with every change.
 *
 * @remarks
 * Each object is unindexed under the values it was indexed under, so even a cached object that
 * a caller changed in place (against the {@link ObjectReader} caveat) leaves no stale entry.
 */
export class ObjectStore<T extends KubeObject = KubeObject> implements ObjectReader<T> {
  readonly #entries = new Map<string, Entry<T>>()
  readonly #byNamespace = new Map<string, Set<string>>()
  readonly #byControllerUid = new Map<string, Set<string>>()
  // Orphans are the only adoption candidates besides a parent's own children; keeping them apart
  // lets a sync skip the namespace's children of other parents, which are most of it at scale.
  readonly #orphansByNamespace = new Map<string, Set<string>>()

  /** Number of cached objects. */
  get size(): number {
    return this.#entries.size
  }

  /** Returns the object with this `namespace/name` (or `name`) key. */
  get(key: string): T | undefined {
    return this.#entries.get(key)?.object
  }

  /** Returns every cached object. */
  list(): T[] {
    return Array.from(this.#entries.values(), (entry) => entry.object)
  }

  /** Returns the objects in one namespace; cluster-scoped objects are in none. */
  listByNamespace(namespace: string): T[] {
    return this.#lookup(this.#byNamespace.get(namespace))
  }

  /** Returns the objects whose controller owner reference has this UID. */
  listByControllerUid(uid: string): T[] {
    return this.#lookup(this.#byControllerUid.get(uid))
  }

  /**
   * Returns the objects without a controller owner reference: those of one namespace (`''`:
   * the cluster-scoped ones), or of every namespace and the cluster scope when none is given.
   */
  listOrphans(namespace?: string): T[] {
    if (namespace !== undefined) return this.#lookup(this.#orphansByNamespace.get(namespace))
    const out: T[] = []
    for (const keys of this.#orphansByNamespace.values()) out.push(...this.#lookup(keys))
    return out
  }

  #lookup(keys: Set<string> | undefined): T[] {
    const out: T[] = []
    for (const key of keys ?? []) {
      const entry = this.#entries.get(key)
      if (entry !== undefined) out.push(entry.object)
    }
    return out
  }

  /** Inserts or replaces an object and returns the one it replaced. */
  upsert(object: T): T | undefined {
    const key = objectKey(object)
    const old = this.#entries.get(key)
    if (old !== undefined) this.#unindex(key, old)
    const entry: Entry<T> = {
      object,
      namespace: namespaceOf(object),
      controllerUid: controllerUid(object),
      orphan: object.metadata.ownerReferences?.some((ref) => ref.controller === true) !== true,
    }
    this.#entries.set(key, entry)
    addToIndex(this.#byNamespace, entry.namespace, key)
    addToIndex(this.#byControllerUid, entry.controllerUid, key)
    if (entry.orphan) addToIndex(this.#orphansByNamespace, entry.namespace ?? CLUSTER_SCOPE, key)
    return old?.object
  }

  /** Removes an object by key and returns it. */
  remove(key: string): T | undefined {
    const old = this.#entries.get(key)
    if (old === undefined) return undefined
    this.#unindex(key, old)
    this.#entries.delete(key)
    return old.object
  }

  #unindex(key: string, entry: Entry<T>): void {
    removeFromIndex(this.#byNamespace, entry.namespace, key)
    removeFromIndex(this.#byControllerUid, entry.controllerUid, key)
    if (entry.orphan)
      removeFromIndex(this.#orphansByNamespace, entry.namespace ?? CLUSTER_SCOPE, key)
  }
}
