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
import type {
  CompositeSyncResponse,
  CustomizeResponse,
  DecoratorSyncResponse,
  HookEvent,
  RelatedResourceRule,
} from '../hook-model.js'
import type { HookResponseSource } from '../hook-response-error.js'
import { readRelatedRule } from './read-related-rule.js'
import { formatJsonPath, ResponseReader } from './response-reader.js'
import type { DecodedResponse, JsonPath } from './response-reader.js'

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

/** Decodes a CompositeController sync or finalize response body. */
export function decodeCompositeSyncResponse(
  body: string,
  source: HookResponseSource
): DecodedResponse<CompositeSyncResponse> {
  const reader = new ResponseReader(body, source)
  const top = reader.struct(reader.parse(), [], COMPOSITE_FIELDS)
  const response: CompositeSyncResponse = {
    status: reader.freeObject(top?.['status'], ['status']) ?? null,
    children: readKubeObjects(reader, top?.['children'], ['children']),
    resyncAfterMs: toResyncMs(reader.number(top?.['resyncAfterSeconds'], ['resyncAfterSeconds'])),
    finalized: reader.boolean(top?.['finalized'], ['finalized']) ?? false,
  }
  const events = readHookEvents(reader, top?.['events'], ['events'])
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
    labels: readMetadataUpdates(reader, top?.['labels'], ['labels']),
    annotations: readMetadataUpdates(reader, top?.['annotations'], ['annotations']),
    status: reader.freeObject(top?.['status'], ['status']) ?? null,
    attachments: readKubeObjects(reader, top?.['attachments'], ['attachments']),
    resyncAfterMs: toResyncMs(reader.number(top?.['resyncAfterSeconds'], ['resyncAfterSeconds'])),
    finalized: reader.boolean(top?.['finalized'], ['finalized']) ?? false,
  }
  const events = readHookEvents(reader, top?.['events'], ['events'])
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
    else relatedResources.push(readRelatedRule(reader, item, at))
  }
  return reader.finish({ relatedResources })
}

/** Converts `resyncAfterSeconds` to ms; absent, zero and negative values mean no resync. */
function toResyncMs(seconds: number | undefined): number {
  return seconds === undefined || seconds <= 0 ? 0 : seconds * 1000
}

function isKubeObject(value: JsonObject): value is KubeObject {
  return (
    typeof value['apiVersion'] === 'string' &&
    typeof value['kind'] === 'string' &&
    isJsonObject(value['metadata'])
  )
}

/**
 * Reads `events` (our extension): `{type: Normal|Warning (default Normal), reason, message}`
 * entries; a reason is required, as the API server requires one.
 */
function readHookEvents(reader: ResponseReader, value: unknown, path: JsonPath): HookEvent[] {
  const events: HookEvent[] = []
  for (const [index, item] of (reader.list(value, path) ?? []).entries()) {
    const at = [...path, index]
    const entry = reader.struct(item, at, EVENT_FIELDS)
    if (entry === undefined) continue
    const type = reader.string(entry['type'], [...at, 'type']) ?? 'Normal'
    if (type !== 'Normal' && type !== 'Warning') {
      reader.invalid([...at, 'type'], `must be Normal or Warning, not "${type}"`)
    }
    const reason = reader.string(entry['reason'], [...at, 'reason']) ?? ''
    if (reason === '') reader.invalid([...at, 'reason'], 'is required')
    events.push({
      type: type,
      reason,
      message: reader.string(entry['message'], [...at, 'message']) ?? '',
    })
  }
  return events
}

/** Reads `children` or `attachments`: full objects, each with apiVersion, kind and metadata. */
function readKubeObjects(reader: ResponseReader, value: unknown, path: JsonPath): KubeObject[] {
  const objects: KubeObject[] = []
  for (const [index, item] of (reader.list(value, path) ?? []).entries()) {
    const at = [...path, index]
    if (item === null) {
      reader.warn(`skipped the null entry "${formatJsonPath(at)}"`)
      continue
    }
    if (!isJsonObject(item)) {
      reader.typeError(at, 'an object with "apiVersion", "kind" and "metadata"', item)
    }
    for (const [field, example] of [
      ['apiVersion', '"v1" or "apps/v1"'],
      ['kind', '"ConfigMap"'],
    ] as const) {
      const text = item[field]
      if (typeof text !== 'string' || text === '') {
        reader.typeError([...at, field], `a non-empty string such as ${example}`, text)
      }
    }
    if (!isJsonObject(item['metadata'])) {
      reader.typeError(
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
function readMetadataUpdates(
  reader: ResponseReader,
  value: unknown,
  path: JsonPath
): Record<string, string | null> {
  const object = reader.map(value, path) ?? {}
  return Object.fromEntries(
    Object.entries(object).map(([key, item]): [string, string | null] => {
      if (item !== null && typeof item !== 'string') {
        reader.typeError([...path, key], 'a string (to set the key) or null (to remove it)', item)
      }
      return [key, item]
    })
  )
}
