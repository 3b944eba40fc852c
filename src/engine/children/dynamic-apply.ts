/**
 * Metacontroller's client-side 3-way "dynamic apply", as pure functions.
 *
 * @remarks
 * Hooks return partial objects: only the fields they care about. To update a child without
 * wiping what the API server or other controllers filled in, upstream Metacontroller
 * (`pkg/dynamic/apply` and `ApplyUpdate` in `pkg/controller/common`) remembers what it last sent
 * in the `metacontroller.k8s.io/last-applied-configuration` annotation and merges three ways, in
 * the style of `kubectl apply` but with no schema: fields that were applied before and are no
 * longer desired are removed, desired fields are set, and everything else on the live object
 * stays. Lists of objects are merged item by item when their items share a conventional key
 * field (`name`, `port`, ...); every other list is replaced whole.
 *
 * Everything here reproduces upstream, including its type-mismatch quirks, because the result
 * decides whether a child is written (or, under the Recreate strategy, deleted). The only
 * intended differences are listed on {@link isSemanticallyEqual} and {@link setLastApplied}.
 * Nothing here mutates its arguments; results never share structure with them.
 *
 * @module
 */
import type { JsonObject, KubeObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import { compareGoStrings, marshalGoJson } from './marshal-go-json.js'
import { messageOf } from '../../core/message-of.js'

/** The annotation holding the JSON of what Metacontroller last applied to an object. */
export const LAST_APPLIED_ANNOTATION = 'metacontroller.k8s.io/last-applied-configuration'

/**
 * The `metadata` fields the server owns; a hook can never change them.
 *
 * @remarks
 * Upstream reverts these after merging (metacontroller issue #76): a hook that echoes an observed
 * child back, stale `resourceVersion` included, would otherwise make every sync look like a
 * change and cause needless updates or recreates.
 */
export const SYSTEM_METADATA_FIELDS: readonly string[] = [
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
]

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
 * Reports that an object's last-applied annotation is not a JSON object.
 *
 * @remarks
 * Upstream fails the update of that child and carries on with the others; so should callers. The
 * annotation is only ever written by Metacontroller, so this means someone edited it by hand.
 */
export class LastAppliedError extends Error {
  override readonly name = 'LastAppliedError'
  /** The `apiVersion` of the object carrying the annotation. */
  readonly apiVersion: string
  /** The kind of the object carrying the annotation. */
  readonly kind: string
  /** The object's namespace; empty for cluster-scoped objects. */
  readonly namespace: string
  /** The object's name. */
  readonly objectName: string

  /** Creates the error for `object`; `reason` says what is wrong with the annotation. */
  constructor(object: KubeObject, reason: string, options?: ErrorOptions) {
    const namespace = typeof object.metadata.namespace === 'string' ? object.metadata.namespace : ''
    const name = typeof object.metadata.name === 'string' ? object.metadata.name : ''
    const where = namespace === '' ? name : `${namespace}/${name}`
    super(
      `can't read the ${LAST_APPLIED_ANNOTATION} annotation of ${object.kind} ${where} ` +
        `(${object.apiVersion}): ${reason}`,
      options
    )
    this.apiVersion = object.apiVersion
    this.kind = object.kind
    this.namespace = namespace
    this.objectName = name
  }
}

/**
 * Returns the configuration Metacontroller last applied to an object, from its annotation.
 *
 * @remarks
 * As upstream (`GetLastApplied`): a missing or empty annotation, the JSON `null`, or annotations
 * that are not all strings (which the server never returns) all mean "nothing applied yet", `{}`.
 *
 * @throws {@link LastAppliedError} when the annotation is not valid JSON or not a JSON object.
 */
export function getLastApplied(object: KubeObject): JsonObject {
  const text = stringMap(getOwn(object.metadata, 'annotations'))?.[LAST_APPLIED_ANNOTATION]
  if (text === undefined || text === '') return {}
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    const detail = messageOf(error)
    throw new LastAppliedError(object, `invalid JSON: ${detail}`, { cause: error })
  }
  // Go's json.Unmarshal into a map leaves the map empty for `null` and fails for other types.
  if (parsed === null) return {}
  if (!isJsonObject(parsed)) throw new LastAppliedError(object, 'the JSON is not an object')
  return parsed
}

/**
 * Computes the object to write so that `observed` takes on what `desired` asks for.
 *
 * @remarks
 * Upstream `ApplyUpdate`, step by step:
 *
 * 1. read the last-applied configuration of `observed` ({@link getLastApplied});
 * 2. blank the last-applied annotation of a copy of `desired`, so an echoed annotation is not
 *    applied or nested inside itself;
 * 3. {@link merge} that copy into a copy of `observed`, three ways;
 * 4. put back the server-owned `metadata` fields of `observed` (`uid`, `resourceVersion`,
 *    `generation`, timestamps, `managedFields`, ...), deleting those it did not have;
 * 5. put back `status` the same way: a parent never changes a child's status;
 * 6. record the copy of `desired` as the new last-applied annotation.
 *
 * The result keeps `observed`'s `resourceVersion`, so it can be PUT as is. When it is
 * {@link isSemanticallyEqual} to `observed`, there is nothing to write.
 *
 * Step 2 follows upstream's code rather than its intent: the annotation is set to `""` instead of
 * being removed, so the annotation JSON written here is byte-identical to upstream's even for
 * hooks that echo observed children back; a mismatch would rewrite (or recreate) every child once
 * after migrating from upstream.
 *
 * @throws {@link LastAppliedError} when the observed last-applied annotation cannot be read.
 */
export function applyUpdate(observed: KubeObject, desired: KubeObject): KubeObject {
  const lastApplied = getLastApplied(observed)
  const applied = blankLastApplied(desired)
  const merged = merge(observed, lastApplied, applied) as KubeObject

  const observedMetadata = getOwn(observed, 'metadata')
  for (const field of SYSTEM_METADATA_FIELDS) {
    revertField(merged, 'metadata', observedMetadata, field)
  }
  revertField(merged, undefined, observed, 'status')

  writeLastApplied(merged, marshalGoJson(applied))
  return merged
}

/**
 * Returns a copy of an object about to be created, carrying its own last-applied annotation.
 *
 * @remarks
 * Call it on the hook's object after defaulting (namespace, `controller-uid` label, decorator
 * annotation) and before adding owner references, as upstream does on create: the annotation
 * records what the hook asked for, and the next {@link applyUpdate} merges against it.
 *
 * Deliberate difference: upstream encodes the object as given, so a hook that passes an old
 * last-applied annotation along gets it nested in the new one and one needless update on the
 * next sync. Here the annotation is blanked first, exactly as {@link applyUpdate} does, so an
 * unchanged object is not rewritten right after its creation.
 */
export function setLastApplied(desired: KubeObject): KubeObject {
  const result = blankLastApplied(desired)
  writeLastApplied(result, marshalGoJson(result))
  return result
}

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
 * Tells whether two JSON values are equal: objects by their keys in any order, arrays in order.
 *
 * @remarks
 * Used on `applyUpdate(observed, desired)` versus `observed` to decide that there is nothing to
 * write, like upstream's `reflect.DeepEqual`. Documented deviation: JavaScript numbers cannot
 * tell `1` from `1.0`, while upstream's decoded `int64(1)` and `float64(1)` differ. A hook that
 * writes `1.0` where the server stores `1` therefore updates its child on every sync upstream,
 * and only once here. Properties whose value is `undefined` count as absent, as they do in JSON.
 */
export function isSemanticallyEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a)) {
    if (!Array.isArray(b)) return false
    const left = a as readonly unknown[]
    const right = b as readonly unknown[]
    return (
      left.length === right.length &&
      left.every((item, index) => isSemanticallyEqual(item, right[index]))
    )
  }
  if (!isJsonObject(a) || !isJsonObject(b)) return false
  const keys = presentKeys(a)
  if (keys.length !== presentKeys(b).length) return false
  return keys.every((key) => Object.hasOwn(b, key) && isSemanticallyEqual(a[key], b[key]))
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

/** Copies `observed[field]` into `merged` (under `parentKey`, when given), or deletes it. */
function revertField(
  merged: KubeObject,
  parentKey: string | undefined,
  observedParent: unknown,
  field: string
): void {
  const found = isJsonObject(observedParent) && hasPresent(observedParent, field)
  let target: unknown = merged
  if (parentKey !== undefined) {
    target = getOwn(merged, parentKey)
    if (!isJsonObject(target)) {
      // Like upstream's SetNestedField, create the parent only when there is a value to put back.
      if (!found) return
      target = {}
      setOwn(merged, parentKey, target)
    }
  }
  const object = target as JsonObject
  if (found) {
    setOwn(object, field, deepCopy(observedParent[field]))
  } else {
    Reflect.deleteProperty(object, field)
  }
}

/** Returns a deep copy of `object` whose last-applied annotation, if any, is the empty string. */
function blankLastApplied(object: KubeObject): KubeObject {
  const copy = deepCopy(object) as KubeObject
  // Upstream only touches annotations it can read as a string map.
  const annotations = stringMap(getOwn(copy.metadata, 'annotations'))
  if (annotations !== undefined && Object.hasOwn(annotations, LAST_APPLIED_ANNOTATION)) {
    annotations[LAST_APPLIED_ANNOTATION] = ''
  }
  return copy
}

/** Sets the last-applied annotation on an object the caller owns. */
function writeLastApplied(object: KubeObject, json: string): void {
  if (!isJsonObject(getOwn(object, 'metadata'))) object.metadata = {}
  const annotations = stringMap(getOwn(object.metadata, 'annotations'))
  if (annotations === undefined) {
    // Upstream reads annotations as a string map and, failing that (absent, null, or a
    // non-string value), starts from an empty map that then replaces them.
    object.metadata.annotations = { [LAST_APPLIED_ANNOTATION]: json }
  } else {
    annotations[LAST_APPLIED_ANNOTATION] = json
  }
}

/** Returns `value` typed as a string map when it is an object whose values are all strings. */
function stringMap(value: unknown): Record<string, string> | undefined {
  if (!isJsonObject(value)) return undefined
  for (const key of presentKeys(value)) {
    if (typeof value[key] !== 'string') return undefined
  }
  return value as Record<string, string>
}

/** Copies a JSON value; `undefined` properties are dropped, as serialisation would drop them. */
function deepCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item: unknown) => deepCopy(item))
  if (!isJsonObject(value)) return value
  const copy: JsonObject = {}
  for (const key of presentKeys(value)) setOwn(copy, key, deepCopy(value[key]))
  return copy
}

/** The keys of an object that hold a value (`undefined` counts as absent, as in JSON). */
function presentKeys(object: JsonObject): string[] {
  return Object.keys(object).filter((key) => object[key] !== undefined)
}

function hasPresent(object: JsonObject, key: string): boolean {
  return Object.hasOwn(object, key) && object[key] !== undefined
}

/** Reads an own property only: `dest['__proto__']` must not reach `Object.prototype`. */
function getOwn(object: unknown, key: string): unknown {
  return isJsonObject(object) && Object.hasOwn(object, key) ? object[key] : undefined
}

/** Sets an own data property, even for the key `__proto__` that JSON.parse can produce. */
function setOwn(object: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(object, key, {
    value,
    writable: true,
    enumerable: true,
    configurable: true,
  })
}
