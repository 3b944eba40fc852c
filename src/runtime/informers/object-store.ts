import type { KubeObject } from '../../core/kube-object.js'
import type { EqualityTerm } from '../../core/label-selector.js'
import { keyOf, namespaceOf, objectKey } from '../../core/object-key.js'
import { LabelIndex } from './label-index.js'
import type { FiledLabels } from './label-index.js'

/** Returns the UID of the object's controller owner reference, if it has one. */
export function controllerUid(object: KubeObject): string | undefined {
  return object.metadata.ownerReferences?.find((ref) => ref.controller === true)?.uid
}

/**
 * What {@link ObjectReader.listMatching} lists: the objects meeting every condition given; no
 * condition lists every object.
 */
export interface ObjectQuery {
  /** Only the objects of this namespace (`''`: the cluster-scoped ones). */
  readonly namespace?: string
  /** Only the objects without a controller owner reference. */
  readonly orphansOnly?: boolean
  /** Only the objects with one of these names. */
  readonly names?: ReadonlySet<string>
  /** Only the objects whose labels meet every term (see `equalityTerms` of a label selector). */
  readonly labels?: readonly EqualityTerm[]
}

/**
 * Below this many objects to visit, a query scans rather than index a label key it names: the
 * index costs memory per object for as long as the store lives.
 */
export const LABEL_INDEX_MIN_VISITS = 64

/**
 * A read handle on an informer's cache, with indexes by namespace, by controller-owner UID, of
 * orphans (objects without a controller reference) per namespace, and by the label keys that
 * queries asked for.
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
  /**
   * Returns the objects meeting every condition of a query, visiting only the smallest index set
   * among those the conditions name (see {@link ObjectStore.listMatching}).
   */
  listMatching(query: ObjectQuery): T[]
  /** Number of cached objects. */
  readonly size: number
  /**
   * Objects the reads have visited since the store was created: the cost of the reads, which
   * complexity tests and benchmarks compare.
   */
  readonly visits: number
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
  /** The values of the indexed label keys it was filed under. */
  labels: FiledLabels
}

/** Where a query's candidates come from, and how many objects that visits. */
interface Source {
  readonly visits: number
  readonly keys: () => Iterable<string>
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
  readonly #labels = new LabelIndex()
  #visits = 0

  /** Number of cached objects. */
  get size(): number {
    return this.#entries.size
  }

  /** Objects the reads have visited since the store was created. */
  get visits(): number {
    return this.#visits
  }

  /** Number of label keys indexed so far (queries index the keys they name, lazily). */
  get indexedLabelKeys(): number {
    return this.#labels.keyCount
  }

  /** Returns the object with this `namespace/name` (or `name`) key. */
  get(key: string): T | undefined {
    return this.#entries.get(key)?.object
  }

  /** Returns every cached object. */
  list(): T[] {
    this.#visits += this.#entries.size
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

  /**
   * Returns the objects meeting every condition of a query.
   *
   * @remarks
   * The candidates come from the smallest of the sets the conditions name: the namespace's
   * objects, its orphans, the named keys, or the objects carrying one of a label term's values;
   * each candidate is then checked against every condition. A label key is indexed the first
   * time a query names it while every other set would visit {@link LABEL_INDEX_MIN_VISITS} or
   * more objects (one pass over the store); from then on it is kept in step.
   */
  listMatching(query: ObjectQuery): T[] {
    const source = this.#cheapestSource(query)
    const out: T[] = []
    let visited = 0
    for (const key of source.keys()) {
      const entry = this.#entries.get(key)
      if (entry === undefined) continue
      visited += 1
      if (meets(entry, query)) out.push(entry.object)
    }
    this.#visits += visited
    return out
  }

  #cheapestSource(query: ObjectQuery): Source {
    let best: Source = { visits: this.#entries.size, keys: () => this.#entries.keys() }
    const consider = (source: Source | undefined): void => {
      if (source !== undefined && source.visits < best.visits) best = source
    }
    const { namespace, names } = query
    if (namespace !== undefined && namespace !== '')
      consider(setSource(this.#byNamespace.get(namespace)))
    if (query.orphansOnly === true) consider(this.#orphanSource(namespace))
    if (names !== undefined) consider(this.#nameSource(names, namespace))
    const terms = query.labels ?? []
    const considerIndexed = (): void => {
      for (const term of terms) {
        const visits = this.#labels.count(term)
        if (visits !== undefined) consider({ visits, keys: () => this.#labels.keys(term) })
      }
    }
    considerIndexed()
    // Keys already indexed may do; only a query that would still visit many objects indexes more.
    if (best.visits >= LABEL_INDEX_MIN_VISITS && terms.some((t) => !this.#labels.has(t.key))) {
      for (const term of terms) this.#indexLabelKey(term.key)
      considerIndexed()
    }
    return best
  }

  #orphanSource(namespace: string | undefined): Source {
    if (namespace !== undefined) return setSource(this.#orphansByNamespace.get(namespace))
    let visits = 0
    for (const keys of this.#orphansByNamespace.values()) visits += keys.size
    const sets = this.#orphansByNamespace
    return { visits, keys: () => flatten(sets.values()) }
  }

  /** Named objects by key: in one namespace, or in each namespace and the cluster scope. */
  #nameSource(names: ReadonlySet<string>, namespace: string | undefined): Source {
    const namespaces = namespace === undefined ? ['', ...this.#byNamespace.keys()] : [namespace]
    return {
      visits: names.size * namespaces.length,
      *keys() {
        for (const ns of namespaces) for (const name of names) yield keyOf(ns, name)
      },
    }
  }

  #indexLabelKey(labelKey: string): void {
    if (this.#labels.has(labelKey)) return
    const entries = this.#entries
    this.#visits += entries.size
    this.#labels.register(
      labelKey,
      (function* () {
        for (const [key, entry] of entries)
          yield [key, entry.object.metadata.labels, entry.labels] as const
      })(),
      (key, filed) => {
        const entry = entries.get(key)
        if (entry !== undefined) entry.labels = filed
      }
    )
  }

  #lookup(keys: Set<string> | undefined): T[] {
    const out: T[] = []
    for (const key of keys ?? []) {
      const entry = this.#entries.get(key)
      if (entry !== undefined) out.push(entry.object)
    }
    this.#visits += out.length
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
      labels: this.#labels.add(key, object.metadata.labels),
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
    this.#labels.remove(key, entry.labels)
  }
}

function setSource(keys: Set<string> | undefined): Source {
  return { visits: keys?.size ?? 0, keys: () => keys ?? [] }
}

function* flatten(sets: Iterable<Set<string>>): Generator<string> {
  for (const keys of sets) yield* keys
}

/** Tells whether a filed object meets every condition of a query. */
function meets<T extends KubeObject>(entry: Entry<T>, query: ObjectQuery): boolean {
  const { metadata } = entry.object
  if (query.namespace !== undefined && (entry.namespace ?? '') !== query.namespace) return false
  if (query.orphansOnly === true && !entry.orphan) return false
  if (query.names !== undefined && !query.names.has(metadata.name ?? '')) return false
  const labels = metadata.labels
  return (query.labels ?? []).every((term) => {
    const value =
      labels !== undefined && Object.hasOwn(labels, term.key) ? labels[term.key] : undefined
    return value !== undefined && term.values.includes(value)
  })
}
