/**
 * The parent fields a revision records (`parentResource.revisionHistory.fieldPaths`, spec §3.11
 * steps 2 and 3): cut out of a parent as a patch, and put back to rebuild a historical parent.
 *
 * @module
 */
import type { JsonObject, KubeObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'

/** Raised for a field path that runs through a value that is not an object. */
export class RevisionPatchError extends Error {
  override readonly name = 'RevisionPatchError'
}

function split(path: string): string[] {
  return path.split('.')
}

/** Reads the value at `parts`; absent when a step is missing; throws when a step is not an object. */
function readPath(source: JsonObject, parts: readonly string[], path: string): unknown {
  let current: unknown = source
  for (const [index, part] of parts.entries()) {
    if (!isJsonObject(current)) {
      throw new RevisionPatchError(
        `field path ${path}: ${parts.slice(0, index).join('.')} is not an object`
      )
    }
    if (!Object.hasOwn(current, part)) return undefined
    current = current[part]
  }
  return current
}

/** Sets the value at `parts` in `target` (changed in place), creating objects on the way. */
function writePath(
  target: JsonObject,
  parts: readonly string[],
  value: unknown,
  path: string
): void {
  let current = target
  for (const part of parts.slice(0, -1)) {
    const next = current[part]
    if (next === undefined || next === null) {
      const created: JsonObject = {}
      current[part] = created
      current = created
    } else if (isJsonObject(next)) {
      current = next
    } else {
      throw new RevisionPatchError(`field path ${path}: ${part} is not an object`)
    }
  }
  const last = parts[parts.length - 1]
  if (last !== undefined) current[last] = structuredClone(value)
}

/**
 * Returns the partial copy of `parent` holding only the given dot-separated field paths (the
 * default is all of `spec`); paths the parent lacks are left out.
 *
 * @throws {@link RevisionPatchError} when a path runs through a value that is not an object.
 */
export function makeRevisionPatch(parent: KubeObject, fieldPaths: readonly string[]): JsonObject {
  const patch: JsonObject = {}
  for (const path of fieldPaths) {
    const parts = split(path)
    const value = readPath(parent, parts, path)
    if (value !== undefined) writePath(patch, parts, value, path)
  }
  return patch
}

/**
 * Rebuilds the parent a revision stands for: a copy of the current parent with the revision's
 * patch written over each field path the patch holds (paths it lacks keep the current value, as
 * upstream).
 *
 * @throws {@link RevisionPatchError} when a path runs through a value that is not an object.
 */
export function applyRevisionPatch(
  parent: KubeObject,
  patch: JsonObject,
  fieldPaths: readonly string[]
): KubeObject {
  const result = structuredClone(parent)
  for (const path of fieldPaths) {
    const parts = split(path)
    const value = readPath(patch, parts, path)
    if (value !== undefined) writePath(result, parts, value, path)
  }
  return result
}
