/**
 * A parent checked against its CRD's schema, with the message `serveHooks` answers 422 with and
 * the test helpers (`callCompositeHook`, `callDecoratorHook`) fail with.
 *
 * @module
 */
import type { JsonObject } from '../core/kube-object.js'
import { isJsonObject } from '../core/kube-object.js'
import { groupOf } from '../core/owner-references.js'
import type { CrdSchema } from './crd-schema.js'
import { crdVersionSchema } from './crd-schema.js'
import { crdOf } from './resource-scope.js'
import { validateAgainstSchema } from './schema-validation.js'
import type { SchemaViolation } from './schema-validation.js'

/** Why a parent does not match its CRD's schema. */
export interface ParentSchemaMismatch {
  /** `parent Kind ns/name does not match its CRD schema: spec.x: Required value; ...`. */
  readonly message: string
  /** The first bad field's path. */
  readonly field: string
  readonly violations: readonly SchemaViolation[]
}

/** Checks `parent` against `schema`; `undefined` when it matches. */
export function parentSchemaMismatch(
  parent: JsonObject,
  schema: CrdSchema
): ParentSchemaMismatch | undefined {
  const violations = validateAgainstSchema(parent, schema)
  const [first] = violations
  if (first === undefined) return undefined
  const meta = isJsonObject(parent['metadata']) ? parent['metadata'] : {}
  const name = [meta['namespace'], meta['name']].filter((p) => typeof p === 'string').join('/')
  return {
    message:
      `parent ${String(parent['kind'])} ${name} does not match its CRD schema: ` +
      violations.map((v) => `${v.path}: ${v.message}`).join('; '),
    field: first.path,
    violations,
  }
}

/**
 * The schema `parent` is checked against: that of the version it names, in the CRD among `crds`
 * of its own group and kind, as the API server picks it. Undefined when no CRD serves its kind (a
 * built-in kind such as a Namespace, or a custom one whose CRD was not given): it is not checked.
 *
 * @throws CrdSchemaError when its CRD has no such version or no schema.
 */
export function parentSchemaOf(
  parent: JsonObject,
  crds: readonly unknown[]
): CrdSchema | undefined {
  const apiVersion = typeof parent['apiVersion'] === 'string' ? parent['apiVersion'] : ''
  const kind = typeof parent['kind'] === 'string' ? parent['kind'] : ''
  const crd = crdOf(crds, apiVersion, kind)
  if (crd === undefined) return undefined
  const group = groupOf(apiVersion)
  const version = group === '' ? apiVersion : apiVersion.slice(group.length + 1)
  return crdVersionSchema(crd, version === '' ? undefined : version).schema
}
