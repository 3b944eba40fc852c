/**
 * Upstream Metacontroller's schema-less three-way merge (`pkg/dynamic/apply`), the heart of
 * dynamic apply (dynamic-apply.ts): remove what was applied and is no longer desired, set what is
 * desired, keep the rest; lists of objects with a conventional key merge item by item.
 *
 * @module
 */
import type { JsonObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import { deepCopy, getOwn, hasPresent, presentKeys, setOwn } from './json-value.js'
import { compareGoStrings } from './marshal-go-json.js'

/**
 * Field names taken as list-map keys, highest precedence first.
 *
 * @remarks
 * The order is upstream's: `containerPort` and `port` beat `name`, so container and service
 * ports merge by number even when they are also named. `mountPath` (#650) and `path` (#443)
 * were added upstream later and are part of the contract.
 */
const LIST_MAP_KEYS = ['containerPort', 'port', 'mountPath', 'name', 'uid', 'ip', 'path'] as const

/**
 * Merges `desired` into `dest` three ways, `last` being what was applied before.
 *
 * @remarks
 * Upstream `Merge`, keyed on the type of `dest`:
 *
 * - dest an object: delete every key of `last` that `desired` lacks, then set every key of
 *   `desired` to `merge(dest[key], last[key], desired[key])`. Keys nobody applied survive.
 * - dest an array: if every item of `dest`, `last` and `desired` is an object and they all share
 *   one of `containerPort`, `port`, `mountPath`, `name`, `uid`, `ip`, `path` (first match wins),
 *   merge the lists as maps keyed by that field's value; otherwise take `desired` whole. A merged
 *   list keeps `dest`'s order, then appends the new items in `desired`'s order.
 * - dest anything else (scalar, `null`, absent): take `desired`.
 *
 * Upstream quirks kept on purpose, for compatibility, because they decide what is written:
 *
 * - dest an object and desired not one (a scalar, an array, `null`): the result is `dest` minus
 *   the keys of `last`, not `desired`. Upstream's "expecting map" check can never fire.
 * - dest an array and desired not one: the list-map merge runs with no desired items (removing
 *   only the items `last` had), or, when no key is found, the result is `null`.
 * - an empty desired list does not clear a keyed list: items `last` did not have stay.
 * - dest items sharing a key each come out as the merged item for that key, so duplicates stay
 *   duplicated (desired duplicates collapse into one).
 *
 * Arguments are never mutated; the result shares no structure with them.
 */
export function merge(dest: unknown, last: unknown, desired: unknown): unknown {
  return mergeOwned(deepCopy(dest), last, desired)
}

/**
 * Merges into `dest`, which the caller owns and which may be changed in place.
 *
 * @remarks
 * `last` and `desired` are only read; whatever is taken from `desired` is copied.
 */
function mergeOwned(dest: unknown, last: unknown, desired: unknown): unknown {
  if (isJsonObject(dest)) {
    // A `last` or `desired` that is not an object counts as empty (upstream's failed type
    // assertion yields a nil map): see the quirks on `merge`.
    return mergeObject(dest, isJsonObject(last) ? last : {}, isJsonObject(desired) ? desired : {})
  }
  if (Array.isArray(dest)) {
    // Likewise a non-array `desired` becomes a nil slice upstream, which is returned as is (JSON
    // null) when no list-map key is found.
    return mergeArray(
      dest as unknown[],
      Array.isArray(last) ? (last as readonly unknown[]) : [],
      Array.isArray(desired) ? (desired as readonly unknown[]) : undefined
    )
  }
  return deepCopy(desired)
}

function mergeObject(dest: JsonObject, last: JsonObject, desired: JsonObject): JsonObject {
  for (const key of presentKeys(last)) {
    if (!hasPresent(desired, key)) Reflect.deleteProperty(dest, key)
  }
  for (const key of presentKeys(desired)) {
    setOwn(dest, key, mergeOwned(getOwn(dest, key), getOwn(last, key), desired[key]))
  }
  return dest
}

function mergeArray(
  dest: unknown[],
  last: readonly unknown[],
  desired: readonly unknown[] | undefined
): unknown {
  const key = detectListMapKey([dest, last, desired ?? []])
  if (key === undefined) return desired === undefined ? null : deepCopy(desired)
  // Detection has checked that every item is an object.
  const objects = (list: readonly unknown[]): readonly JsonObject[] => list as JsonObject[]
  return mergeListMap(key, objects(dest), objects(last), objects(desired ?? []))
}

/**
 * Finds the list-map key shared by every item of every list, or `undefined` for a plain list.
 *
 * @remarks
 * Detection is global: one item lacking the key, or one item that is not an object, in any of
 * the three lists makes the whole list atomic. Lists without a conventional key, such as
 * `tolerations` (`key`/`operator`/`effect`), are therefore replaced whole; server-added defaults
 * in them then differ on every sync (upstream issue #863).
 */
function detectListMapKey(lists: readonly (readonly unknown[])[]): string | undefined {
  let common: Set<string> | undefined
  for (const list of lists) {
    for (const item of list) {
      if (!isJsonObject(item)) return undefined
      if (common === undefined) {
        common = new Set(presentKeys(item))
      } else {
        for (const field of common) {
          if (!hasPresent(item, field)) common.delete(field)
        }
      }
    }
  }
  if (common === undefined) return undefined
  const found = common
  return LIST_MAP_KEYS.find((field) => found.has(field))
}

function mergeListMap(
  key: string,
  dest: readonly JsonObject[],
  last: readonly JsonObject[],
  desired: readonly JsonObject[]
): unknown[] {
  const destMap = toListMap(key, dest)
  const lastMap = toListMap(key, last)
  const desiredMap = toListMap(key, desired)

  // The same three-way object merge, over the keyed items.
  for (const itemKey of lastMap.keys()) {
    if (!desiredMap.has(itemKey)) destMap.delete(itemKey)
  }
  for (const [itemKey, desiredItem] of desiredMap) {
    destMap.set(itemKey, mergeOwned(destMap.get(itemKey), lastMap.get(itemKey), desiredItem))
  }

  // Rebuild the list: surviving dest items where they were, then new desired items in order.
  const result: unknown[] = []
  const added = new Set<string>()
  for (const item of dest) {
    const itemKey = formatGoValue(item[key])
    const merged = destMap.get(itemKey)
    if (merged === undefined) continue
    // Upstream appends the merged item once per dest occurrence; copy repeats so that the
    // result holds no shared objects.
    result.push(added.has(itemKey) ? deepCopy(merged) : merged)
    added.add(itemKey)
  }
  for (const item of desired) {
    const itemKey = formatGoValue(item[key])
    if (added.has(itemKey)) continue
    result.push(destMap.get(itemKey))
    added.add(itemKey)
  }
  return result
}

/** Indexes list items by their key value; a later item with the same key wins, as upstream. */
function toListMap(key: string, items: readonly JsonObject[]): Map<string, unknown> {
  return new Map(items.map((item) => [formatGoValue(item[key]), item]))
}

/**
 * Renders a value as Go's `fmt` verb `%v` renders the decoded JSON value.
 *
 * @remarks
 * Upstream turns list-map key values into map keys with `%v`, so `80` and `"80"` are the same
 * item. The Kubernetes JSON decoder yields `int64` for integers, printed in decimal, and `float64`
 * otherwise, printed as `%g` with the shortest digits. Nested values print as Go prints slices
 * and maps; such keys are nonsense, but deterministic.
 */
function formatGoValue(value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number') return formatGoNumber(value)
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (Array.isArray(value))
    return `[${value.map((item: unknown) => formatGoValue(item)).join(' ')}]`
  if (isJsonObject(value)) {
    const entries = presentKeys(value)
      .sort(compareGoStrings)
      .map((field) => `${field}:${formatGoValue(value[field])}`)
    return `map[${entries.join(' ')}]`
  }
  return '<nil>'
}

const INT64_LIMIT = 2 ** 63

function formatGoNumber(value: number): string {
  // An integer that fits in int64 was decoded as one and prints in plain decimal, as String()
  // prints every integer below 1e21.
  if (Number.isInteger(value) && value >= -INT64_LIMIT && value < INT64_LIMIT) return String(value)
  // %g with the shortest digits: exponent form when the exponent is below -4 or at least 6, the
  // exponent having a sign and at least two digits (1e+06, 1.5e-07).
  const [mantissa = '', exponentText = '0'] = value.toExponential().split('e')
  const exponent = Number(exponentText)
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? '-' : '+'
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`
  }
  return String(value)
}
