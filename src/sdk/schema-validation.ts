/**
 * Checks a value against a CRD's structural schema, the way the API server would have, and says
 * which field is wrong. Used by the webhook server to answer 422 instead of letting a hook fail
 * on a field that is missing or of the wrong type.
 *
 * @remarks
 * Covers types, `required`, `enum`, `nullable`, bounds, lengths, `pattern`, item counts and
 * `additionalProperties`; CEL rules (`x-kubernetes-validations`) and formats are the API
 * server's job and are not checked.
 *
 * @module
 */
import { isJsonObject } from '../core/kube-object.js'
import type { CrdSchema } from './crd-schema.js'

/** One field that does not match the schema. */
export interface SchemaViolation {
  /** The field's path, as the API server prints it: `spec.ports[0].port`. */
  readonly path: string
  readonly message: string
}

function typeName(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

function fits(type: string | undefined, value: unknown): boolean {
  switch (type) {
    case undefined:
      return true
    case 'object':
      return isJsonObject(value)
    case 'array':
      return Array.isArray(value)
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value)
    case 'number':
      return typeof value === 'number'
    case 'string':
    case 'boolean':
      return typeof value === type
    default:
      return true
  }
}

function join(path: string, field: string): string {
  return path === '' ? field : `${path}.${field}`
}

function checkScalar(
  schema: CrdSchema,
  value: unknown,
  path: string,
  out: SchemaViolation[]
): void {
  const at = path === '' ? '(root)' : path
  if (schema.enum !== undefined && !schema.enum.some((allowed) => allowed === value)) {
    const allowed = schema.enum.map((v) => JSON.stringify(v)).join(', ')
    out.push({
      path: at,
      message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${allowed}`,
    })
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum)
      out.push({
        path: at,
        message: `Invalid value: ${value}: should be greater than or equal to ${schema.minimum}`,
      })
    if (schema.maximum !== undefined && value > schema.maximum)
      out.push({
        path: at,
        message: `Invalid value: ${value}: should be less than or equal to ${schema.maximum}`,
      })
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength)
      out.push({
        path: at,
        message: `Invalid value: ${JSON.stringify(value)}: should be at least ${schema.minLength} chars long`,
      })
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      out.push({ path: at, message: `Too long: may not be more than ${schema.maxLength} bytes` })
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value))
      out.push({
        path: at,
        message: `Invalid value: ${JSON.stringify(value)}: should match '${schema.pattern}'`,
      })
  }
}

function check(schema: CrdSchema, value: unknown, path: string, out: SchemaViolation[]): void {
  if (value === null) {
    if (schema.nullable !== true)
      out.push({ path: path || '(root)', message: 'Invalid value: null' })
    return
  }
  if (schema['x-kubernetes-int-or-string'] === true) {
    if (typeof value !== 'string' && !(typeof value === 'number' && Number.isInteger(value)))
      out.push({
        path,
        message: `Invalid value: must be an integer or a string, not ${typeName(value)}`,
      })
    return
  }
  if (!fits(schema.type, value)) {
    out.push({
      path: path || '(root)',
      message: `Invalid value: "${typeName(value)}": must be of type ${schema.type ?? ''}`,
    })
    return
  }
  checkScalar(schema, value, path, out)
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      out.push({ path, message: `Invalid value: should have at least ${schema.minItems} items` })
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      out.push({
        path,
        message: `Too many: ${value.length}: must have at most ${schema.maxItems} items`,
      })
    const items = schema.items
    if (items !== undefined)
      value.forEach((item, i) => {
        check(items, item, `${path}[${i}]`, out)
      })
    return
  }
  if (!isJsonObject(value)) return
  for (const field of schema.required ?? []) {
    if (value[field] === undefined) out.push({ path: join(path, field), message: 'Required value' })
  }
  const properties = schema.properties ?? {}
  for (const [field, child] of Object.entries(value)) {
    const sub = properties[field]
    if (sub !== undefined) check(sub, child, join(path, field), out)
    else if (typeof schema.additionalProperties === 'object')
      check(schema.additionalProperties, child, join(path, field), out)
  }
}

/**
 * Lists every field of `value` that does not match `schema` (empty when it matches).
 *
 * @example
 * ```ts
 * validateAgainstSchema({ spec: {} }, schema) // [{ path: 'spec.message', message: 'Required value' }]
 * ```
 */
export function validateAgainstSchema(value: unknown, schema: CrdSchema): SchemaViolation[] {
  const out: SchemaViolation[] = []
  // metadata, apiVersion and kind are the API server's to check; a CRD schema only lists them.
  if (isJsonObject(value) && schema.type === 'object') {
    const { properties = {} } = schema
    const rest = Object.fromEntries(
      Object.entries(value).filter(([k]) => !['apiVersion', 'kind', 'metadata'].includes(k))
    )
    check(
      {
        ...schema,
        properties: Object.fromEntries(
          Object.entries(properties).filter(([k]) => k !== 'metadata')
        ),
      },
      rest,
      '',
      out
    )
    return out
  }
  check(schema, value, '', out)
  return out
}
