import type { KubeObject } from '../core/kube-object.js'

/** Returns the store key of an object: `namespace/name`, or `name` when cluster-scoped. */
export function objectKey(object: KubeObject): string {
  const { namespace, name = '' } = object.metadata
  return namespace === undefined || namespace === '' ? name : `${namespace}/${name}`
}

/** Returns the UID of the object's controller owner reference, if it has one. */
export function controllerUid(object: KubeObject): string | undefined {
  return object.metadata.ownerReferences?.find((ref) => ref.controller === true)?.uid
}

/**
 * A read handle on an informer's cache, with indexes by namespace and by controller-owner UID.
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
  /** Returns the objects in one namespace. */
  listByNamespace(namespace: string): T[]
  /** Returns the objects whose controller owner reference has this UID. */
  listByControllerUid(uid: string): T[]
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

/** The cache an informer writes to; keeps its indexes in step with every change. */
export class ObjectStore<T extends KubeObject = KubeObject> implements ObjectReader<T> {
  readonly #objects = new Map<string, T>()
  readonly #byNamespace = new Map<string, Set<string>>()
  readonly #byControllerUid = new Map<string, Set<string>>()

  get size(): number {
    return this.#objects.size
  }

  get(key: string): T | undefined {
    return this.#objects.get(key)
  }

  list(): T[] {
    return [...this.#objects.values()]
  }

  listByNamespace(namespace: string): T[] {
    return this.#lookup(this.#byNamespace.get(namespace))
  }

  listByControllerUid(uid: string): T[] {
    return this.#lookup(this.#byControllerUid.get(uid))
  }

  #lookup(keys: Set<string> | undefined): T[] {
    const out: T[] = []
    for (const key of keys ?? []) {
      const object = this.#objects.get(key)
      if (object !== undefined) out.push(object)
    }
    return out
  }

  /** Inserts or replaces an object and returns the one it replaced. */
  upsert(object: T): T | undefined {
    const key = objectKey(object)
    const old = this.#objects.get(key)
    if (old !== undefined) this.#unindex(key, old)
    this.#objects.set(key, object)
    addToIndex(this.#byNamespace, object.metadata.namespace, key)
    addToIndex(this.#byControllerUid, controllerUid(object), key)
    return old
  }

  /** Removes an object by key and returns it. */
  remove(key: string): T | undefined {
    const old = this.#objects.get(key)
    if (old === undefined) return undefined
    this.#unindex(key, old)
    this.#objects.delete(key)
    return old
  }

  #unindex(key: string, object: T): void {
    removeFromIndex(this.#byNamespace, object.metadata.namespace, key)
    removeFromIndex(this.#byControllerUid, controllerUid(object), key)
  }
}
