/**
 * The difference between an observed child and what the engine writes over it, as a JSON merge
 * patch (RFC 7386), for upstream's `V(5)` log of merge diffs.
 *
 * @module
 */

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/**
 * The merge patch that turns `from` into `to`: changed and added fields with their new values
 * (objects recursively, arrays whole), removed fields as `null`; `{}` when nothing differs.
 */
export function mergePatchDiff(
  from: Readonly<Record<string, unknown>>,
  to: Readonly<Record<string, unknown>>
): Record<string, unknown> {
  const patch: Record<string, unknown> = {}
  for (const key of Object.keys(from)) if (!(key in to)) patch[key] = null
  for (const [key, value] of Object.entries(to)) {
    const before = from[key]
    if (same(before, value)) continue
    patch[key] = isObject(before) && isObject(value) ? mergePatchDiff(before, value) : value
  }
  return patch
}
