/**
 * Field ownership (`metadata.managedFields`) as plain JSON: the take-over of a child from the
 * dynamic apply, and the check that a field manager owns nothing it no longer applies.
 *
 * @remarks
 * A `fieldsV1` set is a trie: `f:<name>` for a field, `k:<json>` / `v:<json>` / `i:<n>` for list
 * items, `.` for the node itself. Only field names are followed here; anything below a list is
 * taken as owning the list, which is what the checks need without a schema.
 *
 * @module
 */
import type { JsonObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'

/** One entry of `metadata.managedFields`. */
export interface ManagedFieldsEntry {
  readonly manager?: string
  readonly operation?: string
  readonly apiVersion?: string
  readonly time?: string
  readonly fieldsType?: string
  readonly fieldsV1?: JsonObject
  readonly subresource?: string
}

/** Reads an object's managed fields, ignoring malformed entries. */
export function managedFieldsOf(metadata: unknown): ManagedFieldsEntry[] {
  const entries = isJsonObject(metadata) ? metadata['managedFields'] : undefined
  return Array.isArray(entries)
    ? entries.filter(isJsonObject).map((e) => e as ManagedFieldsEntry)
    : []
}

function union(a: JsonObject, b: JsonObject): JsonObject {
  const out: JsonObject = { ...a }
  for (const [key, value] of Object.entries(b)) {
    const have = out[key]
    out[key] = isJsonObject(have) && isJsonObject(value) ? union(have, value) : value
  }
  return out
}

/**
 * Moves the fields that `from` managers wrote with plain updates (not through a subresource) into
 * `to`'s apply entry. Returns the new list, or `undefined` when no entry of `from` exists.
 *
 * @remarks
 * Why: the dynamic apply writes with PUT, so the server records it as an `Update` manager of the
 * fields it set. If server-side apply simply applied the same values, both managers would own
 * them, and a field later dropped from the hook's answer would stay, still owned by the old
 * manager. Transferring the ownership makes the first apply authoritative: what the engine owned
 * and no longer applies is removed (this is what `kubectl apply --server-side` does when it
 * upgrades from client-side apply). Defaults the server filled in at creation come along and are
 * defaulted again when the apply drops them.
 */
export function transferOwnership(
  entries: readonly ManagedFieldsEntry[],
  from: ReadonlySet<string>,
  to: string
): ManagedFieldsEntry[] | undefined {
  const moved = (e: ManagedFieldsEntry): boolean =>
    e.operation === 'Update' &&
    e.subresource === undefined &&
    e.manager !== undefined &&
    from.has(e.manager)
  const owned = (e: ManagedFieldsEntry): boolean =>
    e.manager === to && e.operation === 'Apply' && e.subresource === undefined
  const taken = entries.filter(moved)
  if (taken.length === 0) return undefined
  const mine = entries.find(owned)
  const fields = [...(mine === undefined ? [] : [mine]), ...taken].reduce<JsonObject>(
    (set, e) => union(set, e.fieldsV1 ?? {}),
    {}
  )
  const entry: ManagedFieldsEntry = {
    manager: to,
    operation: 'Apply',
    ...(taken[0]?.apiVersion === undefined ? {} : { apiVersion: taken[0].apiVersion }),
    fieldsType: 'FieldsV1',
    fieldsV1: fields,
  }
  return [...entries.filter((e) => !moved(e) && !owned(e)), entry]
}

/**
 * The fields `manager` owns through apply that `config` does not set, as dotted paths.
 *
 * @remarks
 * Such a field was applied before and is no longer desired: only an apply removes it. A list is
 * checked as a whole (is the list in the configuration?), not item by item.
 */
export function ownedFieldsOutside(
  config: unknown,
  entries: readonly ManagedFieldsEntry[],
  manager: string
): string[] {
  const missing: string[] = []
  const walk = (node: JsonObject, value: unknown, path: string[]): void => {
    const fields = Object.keys(node).filter((key) => key.startsWith('f:'))
    const items = Object.keys(node).some((key) => /^[kvi]:/.test(key))
    if (fields.length === 0 || items) {
      if (value === undefined || value === null) missing.push(path.join('.'))
      return
    }
    for (const key of fields) {
      const name = key.slice(2)
      const child = isJsonObject(value) && Object.hasOwn(value, name) ? value[name] : undefined
      const next = node[key]
      walk(isJsonObject(next) ? next : {}, child, [...path, name])
    }
  }
  for (const e of entries) {
    if (e.manager === manager && e.operation === 'Apply' && e.subresource === undefined) {
      walk(e.fieldsV1 ?? {}, config, [])
    }
  }
  return missing
}
