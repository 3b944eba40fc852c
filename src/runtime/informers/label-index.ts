/**
 * The label index of an `ObjectStore`: object keys by label value, for the label keys some
 * selector asked for.
 *
 * @remarks
 * Keys are indexed lazily: only a key that a query named (see `ObjectStore.listMatching`) is
 * indexed, from then on for every object that carries it. Indexing every label of every object
 * would cost a set entry per label per object; selectors name a handful of keys.
 *
 * Memory: per indexed key, one map entry per distinct value (the string is the first object's
 * own) and one set entry per object carrying the key (the object key string is the one the store
 * files the object under); an object carrying an indexed key also keeps the values it was filed
 * under, so that removal never reads a possibly changed object.
 *
 * @module
 */
import type { EqualityTerm } from '../../core/label-selector.js'

/**
 * The values an object was filed under, by position of the indexed label key; a hole where it
 * lacks the key. Undefined when it carries no indexed key.
 */
export type FiledLabels = (string | undefined)[] | undefined

function labelOf(
  labels: Readonly<Record<string, string>> | undefined,
  key: string
): string | undefined {
  return labels !== undefined && Object.hasOwn(labels, key) ? labels[key] : undefined
}

/** Object keys by label value, for the label keys registered so far. */
export class LabelIndex {
  readonly #positions = new Map<string, number>()
  readonly #byValue: Map<string, Set<string>>[] = []

  /** Number of label keys indexed. */
  get keyCount(): number {
    return this.#byValue.length
  }

  /** Tells whether a label key is indexed. */
  has(labelKey: string): boolean {
    return this.#positions.has(labelKey)
  }

  /**
   * Starts indexing a label key and files the given objects under it; `refile` receives each
   * filed object's new {@link FiledLabels}, which the caller keeps for {@link LabelIndex.remove}.
   */
  register(
    labelKey: string,
    objects: Iterable<readonly [string, Readonly<Record<string, string>> | undefined, FiledLabels]>,
    refile: (objectKey: string, filed: FiledLabels) => void
  ): void {
    if (this.#positions.has(labelKey)) return
    const position = this.#byValue.length
    const byValue = new Map<string, Set<string>>()
    this.#positions.set(labelKey, position)
    this.#byValue.push(byValue)
    for (const [objectKey, labels, filed] of objects) {
      const value = labelOf(labels, labelKey)
      if (value === undefined) continue
      // Sized exactly: a growing array reserves room for 16 more values per object.
      const values = new Array<string | undefined>(position + 1)
      filed?.forEach((earlier, at) => (values[at] = earlier))
      values[position] = value
      addKey(byValue, value, objectKey)
      refile(objectKey, values)
    }
  }

  /** Files an object under its values of the indexed keys and returns them. */
  add(objectKey: string, labels: Readonly<Record<string, string>> | undefined): FiledLabels {
    if (labels === undefined || this.#byValue.length === 0) return undefined
    let filed: FiledLabels
    for (const [labelKey, position] of this.#positions) {
      const value = labelOf(labels, labelKey)
      const byValue = this.#byValue[position]
      if (value === undefined || byValue === undefined) continue
      filed ??= new Array<string | undefined>(this.#byValue.length)
      filed[position] = value
      addKey(byValue, value, objectKey)
    }
    return filed
  }

  /** Removes an object from the sets it was filed under. */
  remove(objectKey: string, filed: FiledLabels): void {
    filed?.forEach((value, position) => {
      const byValue = this.#byValue[position]
      if (value === undefined || byValue === undefined) return
      const keys = byValue.get(value)
      keys?.delete(objectKey)
      if (keys?.size === 0) byValue.delete(value)
    })
  }

  /** Number of objects filed under the term's values; undefined when its key is not indexed. */
  count(term: EqualityTerm): number | undefined {
    const byValue = this.#termIndex(term)
    if (byValue === undefined) return undefined
    let count = 0
    for (const value of term.values) count += byValue.get(value)?.size ?? 0
    return count
  }

  /** The keys of the objects filed under the term's values (none when its key is not indexed). */
  *keys(term: EqualityTerm): Generator<string> {
    const byValue = this.#termIndex(term)
    if (byValue === undefined) return
    for (const value of term.values) yield* byValue.get(value) ?? []
  }

  #termIndex(term: EqualityTerm): Map<string, Set<string>> | undefined {
    const position = this.#positions.get(term.key)
    return position === undefined ? undefined : this.#byValue[position]
  }
}

function addKey(index: Map<string, Set<string>>, value: string, key: string): void {
  let keys = index.get(value)
  if (keys === undefined) {
    keys = new Set()
    index.set(value, keys)
  }
  keys.add(key)
}
