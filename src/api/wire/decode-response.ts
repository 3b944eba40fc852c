/**
 * Decodes hook response bodies into the internal model, with upstream's strictness rules.
 *
 * @remarks
 * Upstream decodes with `sigs.k8s.io/json` `UnmarshalStrict` into typed Go structs (spec §2.6),
 * and this module reproduces what that accepts:
 *
 * - Field names are case-sensitive: `Children` is an unknown field, not `children`.
 * - Syntax errors and type errors are always fatal ({@link HookResponseError} `syntax`/`type`).
 *   `null` is accepted wherever Go accepts it (a nil pointer, map or slice, or an ignored
 *   primitive), and a `null` body decodes to the empty response, as in Go.
 * - Unknown and duplicate fields are collected as strict issues: fatal in `strict` mode, returned
 *   as warnings in `loose` mode. Unknown fields are checked where Go has typed structs: the top
 *   level, related rules and their selectors. Duplicates are checked there and in maps (`labels`,
 *   `annotations`, `matchLabels`) and everywhere inside `status`. Objects inside `children` and
 *   `attachments` are free-form, as upstream's `Unstructured` decoding is.
 *
 * Choices where upstream has no usable behaviour:
 *
 * - A `null` entry in `children`, `attachments` or `relatedResources` is skipped and reported as
 *   a warning (upstream decodes it, then crashes building the desired state; its own test says
 *   `[null]` means "no children").
 * - Every returned object must have non-empty string `apiVersion` and `kind` and an object
 *   `metadata` (upstream only checks `kind` while decoding; the others fail later anyway).
 * - A related rule needs non-empty `apiVersion` and `resource`, and its selectors are validated
 *   here (operators, value lists, label syntax), so a broken rule fails the customize call
 *   instead of every later sync.
 *
 * @module
 */
import type { JsonObject, KubeObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import { LabelSelectorError } from '../../core/label-selector-error.js'
import { compileLabelSelector, isLabelSelectorOperator } from '../../core/label-selector.js'
import type {
  CompositeSyncResponse,
  CustomizeResponse,
  DecoratorSyncResponse,
  HookEvent,
  LabelSelectorSpec,
  RelatedResourceRule,
} from '../hook-model.js'
import { HookResponseError } from '../hook-response-error.js'
import type { HookResponseSource } from '../hook-response-error.js'
import { findDuplicateKeys } from './duplicate-keys.js'
import type { JsonPathSegment } from './duplicate-keys.js'
import { messageOf } from '../../core/message-of.js'

/** A decoded response, plus the problems that were tolerated. */
export interface DecodedResponse<T> {
  readonly response: T
  /**
   * Non-fatal problems, for a log line: strict issues in `loose` mode (`unknown field "foo"`)
   * and skipped `null` entries.
   */
  readonly warnings: readonly string[]
}

type Path = readonly JsonPathSegment[]

const COMPOSITE_FIELDS = ['status', 'children', 'resyncAfterSeconds', 'finalized', 'events']
const DECORATOR_FIELDS = [
  'labels',
  'annotations',
  'status',
  'attachments',
  'resyncAfterSeconds',
  'finalized',
  'events',
]
const EVENT_FIELDS = ['type', 'reason', 'message']
const CUSTOMIZE_FIELDS = ['relatedResources']
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

/**
 * Most strict issues an error or the warnings name; the rest are counted (`12 more`), so that a
 * body repeating keys thousands of times gives a message of a readable size.
 */
const MAX_LISTED_ISSUES = 20

/** Decodes a CompositeController sync or finalize response body. */
export function decodeCompositeSyncResponse(
  body: string,
  source: HookResponseSource
): DecodedResponse<CompositeSyncResponse> {
  const reader = new ResponseReader(body, source)
  const top = reader.struct(reader.parse(), [], COMPOSITE_FIELDS)
  const response: CompositeSyncResponse = {
    status: reader.freeObject(top?.['status'], ['status']) ?? null,
    children: reader.kubeObjects(top?.['children'], ['children']),
    resyncAfterMs: toResyncMs(reader.number(top?.['resyncAfterSeconds'], ['resyncAfterSeconds'])),
    finalized: reader.boolean(top?.['finalized'], ['finalized']) ?? false,
  }
  const events = reader.hookEvents(top?.['events'], ['events'])
  return reader.finish(events.length === 0 ? response : { ...response, events })
}

/** Decodes a DecoratorController sync or finalize response body. */
export function decodeDecoratorSyncResponse(
  body: string,
  source: HookResponseSource
): DecodedResponse<DecoratorSyncResponse> {
  const reader = new ResponseReader(body, source)
  const top = reader.struct(reader.parse(), [], DECORATOR_FIELDS)
  const response: DecoratorSyncResponse = {
    labels: reader.metadataUpdates(top?.['labels'], ['labels']),
    annotations: reader.metadataUpdates(top?.['annotations'], ['annotations']),
    status: reader.freeObject(top?.['status'], ['status']) ?? null,
    attachments: reader.kubeObjects(top?.['attachments'], ['attachments']),
    resyncAfterMs: toResyncMs(reader.number(top?.['resyncAfterSeconds'], ['resyncAfterSeconds'])),
    finalized: reader.boolean(top?.['finalized'], ['finalized']) ?? false,
  }
  const events = reader.hookEvents(top?.['events'], ['events'])
  return reader.finish(events.length === 0 ? response : { ...response, events })
}

/** Decodes a customize response body, validating each related rule (spec §2.5). */
export function decodeCustomizeResponse(
  body: string,
  source: HookResponseSource
): DecodedResponse<CustomizeResponse> {
  const reader = new ResponseReader(body, source)
  const top = reader.struct(reader.parse(), [], CUSTOMIZE_FIELDS)
  const path = ['relatedResources']
  const relatedResources: RelatedResourceRule[] = []
  for (const [index, item] of (reader.list(top?.['relatedResources'], path) ?? []).entries()) {
    const at = [...path, index]
    if (item === null) reader.warn(`skipped the null entry "${formatJsonPath(at)}"`)
    else relatedResources.push(reader.relatedRule(item, at))
  }
  return reader.finish({ relatedResources })
}

/** Formats a JSON path for messages: `relatedResources[0].labelSelector`, `labels["a/b"]`. */
export function formatJsonPath(path: Path): string {
  let text = ''
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) text += text === '' ? segment : `.${segment}`
    else text += `[${JSON.stringify(segment)}]`
  }
  return text
}

/** Converts `resyncAfterSeconds` to ms; absent, zero and negative values mean no resync. */
function toResyncMs(seconds: number | undefined): number {
  return seconds === undefined || seconds <= 0 ? 0 : seconds * 1000
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing (the field is missing)'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value
    return `the string ${JSON.stringify(shown)}`
  }
  if (typeof value === 'number') return `the number ${String(value)}`
  if (typeof value === 'boolean') return String(value)
  return 'an object'
}

function where(path: Path): string {
  return path.length === 0 ? 'the response body' : `"${formatJsonPath(path)}"`
}

function pathKey(path: Path): string {
  return JSON.stringify(path)
}

function isPrefix(prefix: Path, path: Path): boolean {
  return prefix.length <= path.length && prefix.every((segment, i) => segment === path[i])
}

function isKubeObject(value: JsonObject): value is KubeObject {
  return (
    typeof value['apiVersion'] === 'string' &&
    typeof value['kind'] === 'string' &&
    isJsonObject(value['metadata'])
  )
}

/**
 * Reads one response: type checks that throw, and strict issues collected on the way.
 *
 * @remarks
 * Every typed object it reads is registered (known fields for structs, any key for maps, any
 * depth for free-form values), so that {@link ResponseReader.finish} can tell which duplicate
 * keys upstream would have noticed.
 */
class ResponseReader {
  private readonly strictIssues = new Set<string>()
  private readonly warnings: string[] = []
  private readonly structs = new Map<string, ReadonlySet<string>>()
  private readonly maps = new Set<string>()
  /** The depth of the deepest struct or map registered. */
  private typedDepth = 0
  /** Paths of free-form values; a few at most (`status`), so a prefix scan is cheap. */
  private readonly freeRoots: Path[] = []

  constructor(
    private readonly body: string,
    private readonly source: HookResponseSource
  ) {}

  parse(): unknown {
    if (this.body.trim() === '') {
      throw new HookResponseError('syntax', this.source, ['the response body is empty'])
    }
    try {
      const value: unknown = JSON.parse(this.body)
      return value
    } catch (error) {
      const reason = messageOf(error)
      throw new HookResponseError('syntax', this.source, [`invalid JSON: ${reason}`], {
        cause: error,
      })
    }
  }

  warn(message: string): void {
    this.warnings.push(message)
  }

  /** Reads a typed object (Go struct); null and absent give undefined. */
  struct(value: unknown, path: Path, fields: readonly string[]): JsonObject | undefined {
    if (value === undefined || value === null) return undefined
    if (!isJsonObject(value)) {
      this.typeError(path, path.length === 0 ? 'a JSON object' : 'an object or null', value)
    }
    this.structs.set(pathKey(path), new Set(fields))
    this.typedDepth = Math.max(this.typedDepth, path.length)
    for (const name of Object.keys(value)) {
      if (!fields.includes(name))
        this.strictIssues.add(`unknown field "${formatJsonPath([...path, name])}"`)
    }
    return value
  }

  /** Reads a map (Go `map[string]…`); null and absent give undefined. */
  map(value: unknown, path: Path): JsonObject | undefined {
    if (value === undefined || value === null) return undefined
    if (!isJsonObject(value)) this.typeError(path, 'an object or null', value)
    this.maps.add(pathKey(path))
    this.typedDepth = Math.max(this.typedDepth, path.length)
    return value
  }

  /** Reads a free-form object (Go `map[string]interface{}`), e.g. `status`. */
  freeObject(value: unknown, path: Path): JsonObject | undefined {
    const object = this.map(value, path)
    if (object !== undefined) this.freeRoots.push(path)
    return object
  }

  list(value: unknown, path: Path): readonly unknown[] | undefined {
    if (value === undefined || value === null) return undefined
    if (!Array.isArray(value)) this.typeError(path, 'an array or null', value)
    return value as readonly unknown[]
  }

  string(value: unknown, path: Path): string | undefined {
    if (value === undefined || value === null) return undefined
    if (typeof value !== 'string') this.typeError(path, 'a string', value)
    return value
  }

  number(value: unknown, path: Path): number | undefined {
    if (value === undefined || value === null) return undefined
    if (typeof value !== 'number') this.typeError(path, 'a number', value)
    if (!Number.isFinite(value)) this.typeError(path, 'a number within the float64 range', value)
    return value
  }

  boolean(value: unknown, path: Path): boolean | undefined {
    if (value === undefined || value === null) return undefined
    if (typeof value !== 'boolean') this.typeError(path, 'true, false or null', value)
    return value
  }

  /** Reads a list of strings; `null` items are refused. */
  stringList(value: unknown, path: Path): string[] | undefined {
    const items = this.list(value, path)
    return items?.map((item, index) => {
      if (typeof item !== 'string') this.typeError([...path, index], 'a string', item)
      return item
    })
  }

  /**
   * Reads `events` (our extension): `{type: Normal|Warning (default Normal), reason, message}`
   * entries; a reason is required, as the API server requires one.
   */
  hookEvents(value: unknown, path: Path): HookEvent[] {
    const events: HookEvent[] = []
    for (const [index, item] of (this.list(value, path) ?? []).entries()) {
      const at = [...path, index]
      const entry = this.struct(item, at, EVENT_FIELDS)
      if (entry === undefined) continue
      const type = this.string(entry['type'], [...at, 'type']) ?? 'Normal'
      if (type !== 'Normal' && type !== 'Warning') {
        this.invalid([...at, 'type'], `must be Normal or Warning, not "${type}"`)
      }
      const reason = this.string(entry['reason'], [...at, 'reason']) ?? ''
      if (reason === '') this.invalid([...at, 'reason'], 'is required')
      events.push({
        type: type,
        reason,
        message: this.string(entry['message'], [...at, 'message']) ?? '',
      })
    }
    return events
  }

  /** Reads `children` or `attachments`: full objects, each with apiVersion, kind and metadata. */
  kubeObjects(value: unknown, path: Path): KubeObject[] {
    const objects: KubeObject[] = []
    for (const [index, item] of (this.list(value, path) ?? []).entries()) {
      const at = [...path, index]
      if (item === null) {
        this.warn(`skipped the null entry "${formatJsonPath(at)}"`)
        continue
      }
      if (!isJsonObject(item)) {
        this.typeError(at, 'an object with "apiVersion", "kind" and "metadata"', item)
      }
      for (const [field, example] of [
        ['apiVersion', '"v1" or "apps/v1"'],
        ['kind', '"ConfigMap"'],
      ] as const) {
        const text = item[field]
        if (typeof text !== 'string' || text === '') {
          this.typeError([...at, field], `a non-empty string such as ${example}`, text)
        }
      }
      if (!isJsonObject(item['metadata'])) {
        this.typeError(
          [...at, 'metadata'],
          'an object with "name" or "generateName"',
          item['metadata']
        )
      }
      if (isKubeObject(item)) objects.push(item)
    }
    return objects
  }

  /** Reads decorator `labels`/`annotations`: a string sets a key, null removes it. */
  metadataUpdates(value: unknown, path: Path): Record<string, string | null> {
    const object = this.map(value, path) ?? {}
    return Object.fromEntries(
      Object.entries(object).map(([key, item]): [string, string | null] => {
        if (item !== null && typeof item !== 'string') {
          this.typeError([...path, key], 'a string (to set the key) or null (to remove it)', item)
        }
        return [key, item]
      })
    )
  }

  relatedRule(value: unknown, path: Path): RelatedResourceRule {
    const rule = this.struct(value, path, RULE_FIELDS) ?? {}
    const apiVersion = this.string(rule['apiVersion'], [...path, 'apiVersion']) ?? ''
    const resource = this.string(rule['resource'], [...path, 'resource']) ?? ''
    const labelSelector = this.selector(rule['labelSelector'], [...path, 'labelSelector'])
    const namespaceSelector = this.selector(rule['namespaceSelector'], [
      ...path,
      'namespaceSelector',
    ])
    const namespace = this.string(rule['namespace'], [...path, 'namespace']) ?? ''
    const names = this.stringList(rule['names'], [...path, 'names']) ?? []
    if (apiVersion === '') {
      this.invalid(
        [...path, 'apiVersion'],
        'required: the related resource\'s apiVersion, e.g. "v1" or "apps/v1"'
      )
    }
    if (resource === '') {
      this.invalid([...path, 'resource'], 'required: the plural resource name, e.g. "configmaps"')
    }
    if (names.length > 0 && (labelSelector !== undefined || namespaceSelector !== undefined)) {
      const other = labelSelector !== undefined ? 'labelSelector' : 'namespaceSelector'
      this.invalid(
        path,
        `"names" cannot be combined with "${other}": select related objects either by name ` +
          `(with an optional "namespace") or by selectors`
      )
    }
    if (namespace !== '' && namespaceSelector !== undefined) {
      this.invalid(
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
  selector(value: unknown, path: Path): LabelSelectorSpec | undefined {
    const object = this.struct(value, path, SELECTOR_FIELDS)
    if (object === undefined) return undefined
    const labelsPath = [...path, 'matchLabels']
    const labels = this.map(object['matchLabels'], labelsPath)
    const expressionsPath = [...path, 'matchExpressions']
    const expressions = this.list(object['matchExpressions'], expressionsPath)
    const selector: {
      matchLabels?: Record<string, string>
      matchExpressions?: NonNullable<LabelSelectorSpec['matchExpressions']>
    } = {}
    if (labels !== undefined) {
      selector.matchLabels = Object.fromEntries(
        Object.entries(labels).map(([key, item]): [string, string] => {
          if (typeof item !== 'string') this.typeError([...labelsPath, key], 'a string', item)
          return [key, item]
        })
      )
    }
    if (expressions !== undefined) {
      selector.matchExpressions = expressions.map((item, index) => {
        const at = [...expressionsPath, index]
        if (item === null) this.typeError(at, 'an object with "key", "operator" and "values"', item)
        const requirement = this.struct(item, at, REQUIREMENT_FIELDS) ?? {}
        const key = this.string(requirement['key'], [...at, 'key']) ?? ''
        const operator = this.string(requirement['operator'], [...at, 'operator'])
        if (!isLabelSelectorOperator(operator)) {
          this.invalid(
            [...at, 'operator'],
            `must be In, NotIn, Exists or DoesNotExist (case-sensitive), got ${describe(operator)}`
          )
        }
        const values = this.stringList(requirement['values'], [...at, 'values'])
        return values === undefined ? { key, operator } : { key, operator, values }
      })
    }
    try {
      compileLabelSelector(selector)
    } catch (error) {
      if (!(error instanceof LabelSelectorError)) throw error
      this.invalid(path, error.message.replace(/^invalid label selector: /, ''))
    }
    return selector
  }

  /** Adds the duplicate keys upstream would see, then applies the mode to all strict issues. */
  finish<T>(response: T): DecodedResponse<T> {
    const noticed = new Map<Path, ReadonlySet<string> | boolean>()
    let unlisted = 0
    for (const { container, key } of findDuplicateKeys(this.body)) {
      let keys = noticed.get(container)
      if (keys === undefined) {
        keys = this.noticedKeys(container)
        noticed.set(container, keys)
      }
      if (keys === false || (keys !== true && !keys.has(key))) continue
      // Only the listed issues are formatted: a path costs its depth, and a body can repeat keys
      // in thousands of deep objects.
      if (this.strictIssues.size < MAX_LISTED_ISSUES) {
        this.strictIssues.add(`duplicate field "${formatJsonPath([...container, key])}"`)
      } else unlisted++
    }
    const all = [...this.strictIssues]
    const more = all.length - MAX_LISTED_ISSUES + unlisted
    const issues = more > 0 ? [...all.slice(0, MAX_LISTED_ISSUES), `${more} more`] : all
    if (issues.length > 0 && this.source.mode === 'strict') {
      throw new HookResponseError('strict', this.source, issues)
    }
    return { response, warnings: [...issues, ...this.warnings] }
  }

  /**
   * Which duplicate keys of the object at `container` upstream notices: a struct's known
   * fields, every key of a map or of anything inside a free-form value (true), or none (false).
   */
  private noticedKeys(container: Path): ReadonlySet<string> | boolean {
    if (this.freeRoots.some((root) => isPrefix(root, container))) return true
    // Typed objects sit a few levels deep; a deeper path cannot be one, and building its key
    // would cost its depth for each of possibly thousands of objects.
    if (container.length > this.typedDepth) return false
    const fields = this.structs.get(pathKey(container))
    if (fields !== undefined) return fields
    return this.maps.has(pathKey(container))
  }

  private typeError(path: Path, expected: string, value: unknown): never {
    throw new HookResponseError('type', this.source, [
      `${where(path)} must be ${expected}, got ${describe(value)}`,
    ])
  }

  private invalid(path: Path, message: string): never {
    throw new HookResponseError('invalid', this.source, [`${where(path)}: ${message}`])
  }
}
