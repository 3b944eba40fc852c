/**
 * The form in which the engine's shared informers hold each object: as the server sent it,
 * without `metadata.managedFields`, in V8's compact object layout, with the strings that repeat
 * across objects held once.
 *
 * @module
 */
import { isJsonObject } from '../core/kube-object.js'
import type { KubeObject, ObjectMeta } from '../core/kube-object.js'

/**
 * How many distinct strings one compactor shares at most. The strings it shares repeat across
 * objects (namespaces, owners' API versions and kinds): a few per controller. The bound keeps a
 * cluster with unusually many namespaces from growing the table without end; past it, new
 * strings are simply kept as they came.
 */
export const DEFAULT_MAX_SHARED_STRINGS = 4096

/**
 * Returns the informers' transform: each object without `metadata.managedFields` (the engine
 * never reads them; they are often a third of an object), otherwise equal to what the server sent,
 * fields in the same order.
 *
 * @remarks
 * Memory, measured at 1,000 parents (docs/performance.md): deleting a field from an object puts
 * it in V8's dictionary mode (from the second object of a shape on), about four times the size of
 * the same fields in the fast layout, so `metadata` is copied without the field instead. V8's JSON parser shares a string value only
 * when it is at most 10 characters long; a namespace, an owner's `apiVersion` such as
 * `example.com/v1` or a kind such as `CompositeController` is otherwise one more copy per object,
 * so those are replaced by one shared copy.
 */
export function objectCompactor(
  maxSharedStrings: number = DEFAULT_MAX_SHARED_STRINGS
): (object: KubeObject) => KubeObject {
  const shared = new Map<string, string>()
  const share = (value: string): string => {
    const known = shared.get(value)
    if (known !== undefined) return known
    if (shared.size < maxSharedStrings) shared.set(value, value)
    return value
  }
  return (object) => {
    // Not an object's shape (the type is the server's promise, not a check): the informer caches
    // what the server sent, and its own checks name what is missing.
    const metadata: unknown = object.metadata
    if (!isJsonObject(metadata)) return object
    const copy: KubeObject = { ...object, metadata: compactMetadata(metadata, share) }
    if (typeof object.apiVersion === 'string') copy.apiVersion = share(object.apiVersion)
    if (typeof object.kind === 'string') copy.kind = share(object.kind)
    return copy
  }
}

/** `metadata` without `managedFields`, built field by field so that it keeps the fast layout. */
function compactMetadata(
  metadata: Record<string, unknown>,
  share: (value: string) => string
): ObjectMeta {
  const copy: Record<string, unknown> = {}
  for (const [field, value] of Object.entries(metadata)) {
    if (field === 'managedFields') continue
    if (field === 'namespace' && typeof value === 'string') copy[field] = share(value)
    else if (field === 'ownerReferences' && Array.isArray(value))
      copy[field] = value.map((ref: unknown) => compactOwnerReference(ref, share))
    else copy[field] = value
  }
  return copy
}

/** An owner reference with its `apiVersion` and `kind` shared, its fields in the same order. */
function compactOwnerReference(ref: unknown, share: (value: string) => string): unknown {
  // Anything but a JSON object is left alone: the informer caches what the server sent.
  if (!isJsonObject(ref)) return ref
  const copy: Record<string, unknown> = {}
  for (const [field, value] of Object.entries(ref)) {
    copy[field] =
      (field === 'apiVersion' || field === 'kind') && typeof value === 'string'
        ? share(value)
        : value
  }
  return copy
}
