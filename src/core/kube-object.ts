/**
 * The Kubernetes object model as plain JSON, exactly as the API server sends it.
 *
 * @remarks
 * Objects are never converted into classes: timestamps stay strings and unknown fields are kept,
 * so that what the engine reads, merges and writes back is byte-for-byte what the server knows.
 *
 * @module
 */

/** A JSON value as it appears in Kubernetes objects. */
export type JsonValue =
  string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }

/** A JSON object (a map from field names to JSON values). */
export type JsonObject = Record<string, unknown>

/** An owner reference inside `metadata.ownerReferences`. */
export interface OwnerReference {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly uid: string
  readonly controller?: boolean
  readonly blockOwnerDeletion?: boolean
}

/** The fields of `metadata` that this project reads; every other field is kept as is. */
export interface ObjectMeta {
  name?: string
  generateName?: string
  namespace?: string
  uid?: string
  resourceVersion?: string
  generation?: number
  creationTimestamp?: string
  deletionTimestamp?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
  ownerReferences?: OwnerReference[]
  finalizers?: string[]
  [field: string]: unknown
}

/** Any Kubernetes object: apiVersion, kind, metadata and whatever else the server sent. */
export interface KubeObject {
  apiVersion: string
  kind: string
  metadata: ObjectMeta
  [field: string]: unknown
}

/** The list shape returned by list calls, with `metadata.resourceVersion` and `continue`. */
export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion: string
  kind: string
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number }
  items: T[]
}

/** Tells whether a value is a non-null, non-array object. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
