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
import { deepCopy, getOwn, hasPresent, presentKeys, setOwn } from './json-value.js'
import { marshalGoJson } from './marshal-go-json.js'
import { merge } from './three-way-merge.js'
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
