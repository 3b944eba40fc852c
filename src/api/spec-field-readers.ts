/**
 * The readers of single spec fields (an object, a string, a boolean) that every spec parser
 * builds on; each throws a {@link ControllerSpecError} naming the field it read.
 *
 * @module
 */
import type { JsonObject } from '../core/kube-object.js'
import { isJsonObject } from '../core/kube-object.js'
import { ControllerSpecError } from './controller-spec-error.js'

/** Returns `value` as an object, or throws "must be an object" for `path`. */
export function field(value: unknown, path: string): JsonObject {
  if (!isJsonObject(value)) throw new ControllerSpecError(path, 'must be an object')
  return value
}

/** Returns `value` as an object, undefined when absent or null, or throws for `path`. */
export function optionalObject(value: unknown, path: string): JsonObject | undefined {
  return value === undefined || value === null ? undefined : field(value, path)
}

/** Reads `object[key]`, which must be a non-empty string. */
export function requiredString(object: JsonObject, key: string, path: string): string {
  const value = object[key]
  if (typeof value !== 'string' || value === '') {
    throw new ControllerSpecError(`${path}.${key}`, 'is required and must be a non-empty string')
  }
  return value
}

/** Reads `object[key]` as a string, undefined when absent or null. */
export function optionalString(object: JsonObject, key: string, path: string): string | undefined {
  const value = object[key]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw new ControllerSpecError(`${path}.${key}`, 'must be a string')
  return value
}

/** Reads `object[key]` as a boolean; absent or null means false (the CRD default). */
export function optionalBoolean(object: JsonObject, key: string, path: string): boolean {
  const value = object[key]
  if (value === undefined || value === null) return false
  if (typeof value !== 'boolean')
    throw new ControllerSpecError(`${path}.${key}`, 'must be a boolean')
  return value
}
