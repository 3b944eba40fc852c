/**
 * The OpenAPI v3 schema of a CustomResourceDefinition version, as plain data, and how to pick
 * it from a CRD object.
 *
 * @module
 */
import { isJsonObject } from '../core/kube-object.js'

/** The subset of a CRD's structural schema that types and validation read. */
export interface CrdSchema {
  readonly type?: string
  readonly description?: string
  readonly properties?: Readonly<Record<string, CrdSchema>>
  readonly required?: readonly string[]
  readonly items?: CrdSchema
  readonly additionalProperties?: CrdSchema | boolean
  readonly enum?: readonly unknown[]
  readonly nullable?: boolean
  readonly minimum?: number
  readonly maximum?: number
  readonly minLength?: number
  readonly maxLength?: number
  readonly minItems?: number
  readonly maxItems?: number
  readonly pattern?: string
  readonly format?: string
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean
  readonly 'x-kubernetes-int-or-string'?: boolean
  readonly 'x-kubernetes-embedded-resource'?: boolean
}

/** One served version of a CRD: its names and schema. */
export interface CrdVersionSchema {
  readonly group: string
  readonly version: string
  readonly kind: string
  readonly plural: string
  readonly schema: CrdSchema
}

/** A CRD object that is not what {@link crdVersionSchema} needs, with why. */
export class CrdSchemaError extends Error {
  override readonly name = 'CrdSchemaError'
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/**
 * Picks a version's schema from a CRD: `version` when given, else the storage version.
 *
 * @throws {@link CrdSchemaError} when the object is not a CRD, the version is missing or it has
 * no `schema.openAPIV3Schema`.
 */
export function crdVersionSchema(crd: unknown, version?: string): CrdVersionSchema {
  if (!isJsonObject(crd) || crd['kind'] !== 'CustomResourceDefinition') {
    throw new CrdSchemaError('not a CustomResourceDefinition')
  }
  const spec = isJsonObject(crd['spec']) ? crd['spec'] : {}
  const names = isJsonObject(spec['names']) ? spec['names'] : {}
  const group = text(spec['group'])
  const kind = text(names['kind'])
  const plural = text(names['plural'])
  if (group === undefined || kind === undefined || plural === undefined) {
    throw new CrdSchemaError('the CRD has no spec.group, spec.names.kind or spec.names.plural')
  }
  const versions = (Array.isArray(spec['versions']) ? spec['versions'] : []).filter(isJsonObject)
  const chosen =
    version === undefined
      ? (versions.find((v) => v['storage'] === true) ?? versions[0])
      : versions.find((v) => v['name'] === version)
  if (chosen === undefined) {
    const served = versions.map((v) => String(v['name'])).join(', ') || 'none'
    throw new CrdSchemaError(
      `the CRD ${plural}.${group} has no version ${version ?? ''} (versions: ${served})`
    )
  }
  const schema = isJsonObject(chosen['schema']) ? chosen['schema']['openAPIV3Schema'] : undefined
  if (!isJsonObject(schema)) {
    throw new CrdSchemaError(
      `version ${String(chosen['name'])} of ${plural}.${group} has no schema.openAPIV3Schema`
    )
  }
  return { group, version: String(chosen['name']), kind, plural, schema: schema }
}
