/**
 * Safe reads, writes and copies of parsed JSON: own properties only (a `__proto__` key from
 * JSON.parse never reaches `Object.prototype`), and `undefined` counted as absent, as in JSON.
 *
 * @module
 */
import type { JsonObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'

/** Copies a JSON value; `undefined` properties are dropped, as serialisation would drop them. */
export function deepCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item: unknown) => deepCopy(item))
  if (!isJsonObject(value)) return value
  const copy: JsonObject = {}
  for (const key of presentKeys(value)) setOwn(copy, key, deepCopy(value[key]))
  return copy
}

/** The keys of an object that hold a value (`undefined` counts as absent, as in JSON). */
export function presentKeys(object: JsonObject): string[] {
  return Object.keys(object).filter((key) => object[key] !== undefined)
}

/** Whether `object` has `key` with a value (`undefined` counts as absent). */
export function hasPresent(object: JsonObject, key: string): boolean {
  return Object.hasOwn(object, key) && object[key] !== undefined
}

/** Reads an own property only: `dest['__proto__']` must not reach `Object.prototype`. */
export function getOwn(object: unknown, key: string): unknown {
  return isJsonObject(object) && Object.hasOwn(object, key) ? object[key] : undefined
}

/** Sets an own data property, even for the key `__proto__` that JSON.parse can produce. */
export function setOwn(object: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(object, key, {
    value,
    writable: true,
    enumerable: true,
    configurable: true,
  })
}
