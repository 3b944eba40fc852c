/**
 * The related rules of a customize response, validated when decoded (spec §2.5): required
 * fields, exclusive ways of selecting, and selectors that compile, so a broken rule fails the
 * customize call instead of every later sync.
 *
 * @module
 */
import { LabelSelectorError } from '../../core/label-selector-error.js'
import { compileLabelSelector, isLabelSelectorOperator } from '../../core/label-selector.js'
import type { LabelSelectorSpec, RelatedResourceRule } from '../hook-model.js'
import { describeJsonValue } from './response-reader.js'
import type { JsonPath, ResponseReader } from './response-reader.js'

const RULE_FIELDS = [
  'apiVersion',
  'resource',
  'labelSelector',
  'namespaceSelector',
  'namespace',
  'names',
]
const SELECTOR_FIELDS = ['matchLabels', 'matchExpressions']
const REQUIREMENT_FIELDS = ['key', 'operator', 'values']

/** Reads and validates one related rule of a customize response. */
export function readRelatedRule(
  reader: ResponseReader,
  value: unknown,
  path: JsonPath
): RelatedResourceRule {
  const rule = reader.struct(value, path, RULE_FIELDS) ?? {}
  const apiVersion = reader.string(rule['apiVersion'], [...path, 'apiVersion']) ?? ''
  const resource = reader.string(rule['resource'], [...path, 'resource']) ?? ''
  const labelSelector = readSelector(reader, rule['labelSelector'], [...path, 'labelSelector'])
  const namespaceSelector = readSelector(reader, rule['namespaceSelector'], [
    ...path,
    'namespaceSelector',
  ])
  const namespace = reader.string(rule['namespace'], [...path, 'namespace']) ?? ''
  const names = reader.stringList(rule['names'], [...path, 'names']) ?? []
  if (apiVersion === '') {
    reader.invalid(
      [...path, 'apiVersion'],
      'required: the related resource\'s apiVersion, e.g. "v1" or "apps/v1"'
    )
  }
  if (resource === '') {
    reader.invalid([...path, 'resource'], 'required: the plural resource name, e.g. "configmaps"')
  }
  if (names.length > 0 && (labelSelector !== undefined || namespaceSelector !== undefined)) {
    const other = labelSelector !== undefined ? 'labelSelector' : 'namespaceSelector'
    reader.invalid(
      path,
      `"names" cannot be combined with "${other}": select related objects either by name ` +
        `(with an optional "namespace") or by selectors`
    )
  }
  if (namespace !== '' && namespaceSelector !== undefined) {
    reader.invalid(
      path,
      '"namespace" cannot be combined with "namespaceSelector": name one namespace, or ' +
        'select namespaces by label'
    )
  }
  const result: {
    apiVersion: string
    resource: string
    labelSelector?: LabelSelectorSpec
    namespaceSelector?: LabelSelectorSpec
    namespace?: string
    names?: readonly string[]
  } = { apiVersion, resource }
  if (labelSelector !== undefined) result.labelSelector = labelSelector
  if (namespaceSelector !== undefined) result.namespaceSelector = namespaceSelector
  if (namespace !== '') result.namespace = namespace
  if (names.length > 0) result.names = names
  return result
}

/** Reads and validates a label selector; null and absent give undefined. */
function readSelector(
  reader: ResponseReader,
  value: unknown,
  path: JsonPath
): LabelSelectorSpec | undefined {
  const object = reader.struct(value, path, SELECTOR_FIELDS)
  if (object === undefined) return undefined
  const labelsPath = [...path, 'matchLabels']
  const labels = reader.map(object['matchLabels'], labelsPath)
  const expressionsPath = [...path, 'matchExpressions']
  const expressions = reader.list(object['matchExpressions'], expressionsPath)
  const selector: {
    matchLabels?: Record<string, string>
    matchExpressions?: NonNullable<LabelSelectorSpec['matchExpressions']>
  } = {}
  if (labels !== undefined) {
    selector.matchLabels = Object.fromEntries(
      Object.entries(labels).map(([key, item]): [string, string] => {
        if (typeof item !== 'string') reader.typeError([...labelsPath, key], 'a string', item)
        return [key, item]
      })
    )
  }
  if (expressions !== undefined) {
    selector.matchExpressions = expressions.map((item, index) => {
      const at = [...expressionsPath, index]
      if (item === null) reader.typeError(at, 'an object with "key", "operator" and "values"', item)
      const requirement = reader.struct(item, at, REQUIREMENT_FIELDS) ?? {}
      const key = reader.string(requirement['key'], [...at, 'key']) ?? ''
      const operator = reader.string(requirement['operator'], [...at, 'operator'])
      if (!isLabelSelectorOperator(operator)) {
        reader.invalid(
          [...at, 'operator'],
          `must be In, NotIn, Exists or DoesNotExist (case-sensitive), got ${describeJsonValue(operator)}`
        )
      }
      const values = reader.stringList(requirement['values'], [...at, 'values'])
      return values === undefined ? { key, operator } : { key, operator, values }
    })
  }
  try {
    compileLabelSelector(selector)
  } catch (error) {
    if (!(error instanceof LabelSelectorError)) throw error
    reader.invalid(path, error.message.replace(/^invalid label selector: /, ''))
  }
  return selector
}
