/**
 * The CompositeController spec (`metacontroller.k8s.io/v1alpha1`), parsed from JSON with the
 * CRD's defaults applied and every problem reported with the field that has it.
 *
 * @remarks
 * The same parser serves CompositeController objects read from the cluster and controllers
 * defined in TypeScript, so both get the same defaults and errors.
 *
 * @module
 */
import { parseGoDuration } from '../core/go-duration.js'
import { isJsonObject } from '../core/kube-object.js'
import type { JsonObject } from '../core/kube-object.js'
import { ControllerSpecError } from './controller-spec-error.js'
import type { HookVersion, LabelSelectorSpec, ResponseDecodeMode } from './hook-model.js'

/** A resource named by apiVersion and plural resource name. */
export interface ResourceRule {
  readonly apiVersion: string
  readonly resource: string
}

/** How existing children that differ from the desired state are updated. */
export type UpdateMethod =
  'OnDelete' | 'Recreate' | 'InPlace' | 'RollingRecreate' | 'RollingInPlace'

const UPDATE_METHODS: readonly UpdateMethod[] = [
  'OnDelete',
  'Recreate',
  'InPlace',
  'RollingRecreate',
  'RollingInPlace',
]

/** A child rule of a CompositeController. */
export interface ChildRule extends ResourceRule {
  readonly updateMethod: UpdateMethod
}

/** The parent rule of a CompositeController. */
export interface ParentRule extends ResourceRule {
  readonly labelSelector: LabelSelectorSpec | undefined
  readonly ignoreStatusChanges: boolean
  readonly revisionFieldPaths: readonly string[]
}

/** Where and how a webhook is called. */
export interface WebhookSpec {
  /** Full URL (from `url`, or built from `service` + `path`). */
  readonly url: string
  readonly timeoutMs: number
  /** Explicit `responseUnMarshallMode`; the version's default applies when absent. */
  readonly decodeMode: ResponseDecodeMode | undefined
}

/** One hook: its protocol version and, when enabled, its webhook. */
export interface HookSpec {
  readonly version: HookVersion
  /** Absent for a hook with no webhook (upstream: "disabled"). */
  readonly webhook: WebhookSpec | undefined
}

/** A parsed CompositeController spec. */
export interface CompositeControllerSpec {
  readonly parentResource: ParentRule
  readonly childResources: readonly ChildRule[]
  readonly hooks: {
    readonly sync: HookSpec | undefined
    readonly finalize: HookSpec | undefined
    readonly customize: HookSpec | undefined
  }
  readonly resyncPeriodMs: number | undefined
  readonly generateSelector: boolean
}

/** Default webhook timeout (10 s). */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000

function field(value: unknown, path: string): JsonObject {
  if (!isJsonObject(value)) throw new ControllerSpecError(path, 'must be an object')
  return value
}

function optionalObject(value: unknown, path: string): JsonObject | undefined {
  return value === undefined || value === null ? undefined : field(value, path)
}

function requiredString(object: JsonObject, key: string, path: string): string {
  const value = object[key]
  if (typeof value !== 'string' || value === '') {
    throw new ControllerSpecError(`${path}.${key}`, 'is required and must be a non-empty string')
  }
  return value
}

function optionalString(object: JsonObject, key: string, path: string): string | undefined {
  const value = object[key]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw new ControllerSpecError(`${path}.${key}`, 'must be a string')
  return value
}

function optionalBoolean(object: JsonObject, key: string, path: string): boolean {
  const value = object[key]
  if (value === undefined || value === null) return false
  if (typeof value !== 'boolean')
    throw new ControllerSpecError(`${path}.${key}`, 'must be a boolean')
  return value
}

function resourceRule(value: unknown, path: string): ResourceRule {
  const object = field(value, path)
  return {
    apiVersion: requiredString(object, 'apiVersion', path),
    resource: requiredString(object, 'resource', path),
  }
}

/** Parses a label selector object, checking its shape (not its semantics). */
export function parseLabelSelector(value: unknown, path: string): LabelSelectorSpec | undefined {
  const object = optionalObject(value, path)
  if (object === undefined) return undefined
  const matchLabels = optionalObject(object['matchLabels'], `${path}.matchLabels`)
  const labels: Record<string, string> = {}
  for (const [key, label] of Object.entries(matchLabels ?? {})) {
    if (typeof label !== 'string') {
      throw new ControllerSpecError(`${path}.matchLabels.${key}`, 'must be a string')
    }
    labels[key] = label
  }
  const rawExpressions = object['matchExpressions']
  if (rawExpressions !== undefined && rawExpressions !== null && !Array.isArray(rawExpressions)) {
    throw new ControllerSpecError(`${path}.matchExpressions`, 'must be a list')
  }
  const expressions = ((rawExpressions ?? []) as unknown[]).map((raw, i) => {
    const at = `${path}.matchExpressions[${i}]`
    const expression = field(raw, at)
    const operator = requiredString(expression, 'operator', at)
    if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(operator)) {
      throw new ControllerSpecError(
        `${at}.operator`,
        `must be In, NotIn, Exists or DoesNotExist, not "${operator}"`
      )
    }
    const values = expression['values']
    if (
      values !== undefined &&
      values !== null &&
      (!Array.isArray(values) || values.some((v) => typeof v !== 'string'))
    ) {
      throw new ControllerSpecError(`${at}.values`, 'must be a list of strings')
    }
    return {
      key: requiredString(expression, 'key', at),
      operator: operator as 'In' | 'NotIn' | 'Exists' | 'DoesNotExist',
      ...(Array.isArray(values) ? { values: values as string[] } : {}),
    }
  })
  return {
    ...(matchLabels === undefined ? {} : { matchLabels: labels }),
    ...(rawExpressions === undefined || rawExpressions === null
      ? {}
      : { matchExpressions: expressions }),
  }
}

function parseWebhook(value: unknown, path: string): WebhookSpec | undefined {
  const webhook = optionalObject(value, path)
  if (webhook === undefined) return undefined
  const url = optionalString(webhook, 'url', path)
  const service = optionalObject(webhook['service'], `${path}.service`)
  const hookPath = optionalString(webhook, 'path', path)
  let target: string
  if (url !== undefined && url !== '') {
    target = url
  } else if (service !== undefined && hookPath !== undefined) {
    const name = requiredString(service, 'name', `${path}.service`)
    const namespace = requiredString(service, 'namespace', `${path}.service`)
    const port = service['port'] ?? 80
    if (typeof port !== 'number' || !Number.isInteger(port)) {
      throw new ControllerSpecError(`${path}.service.port`, 'must be an integer')
    }
    const protocol = optionalString(service, 'protocol', `${path}.service`) ?? 'http'
    target = `${protocol}://${name}.${namespace}:${port}${hookPath}`
  } else {
    throw new ControllerSpecError(
      path,
      "invalid webhook config: must specify either a full 'url', or both 'service' and 'path'"
    )
  }
  try {
    new URL(target)
  } catch {
    throw new ControllerSpecError(path, `webhook URL "${target}" is not a valid URL`)
  }
  const timeoutText = optionalString(webhook, 'timeout', path)
  let timeoutMs = DEFAULT_WEBHOOK_TIMEOUT_MS
  if (timeoutText !== undefined) {
    const parsed = parseGoDuration(timeoutText)
    if (parsed === undefined) {
      throw new ControllerSpecError(
        `${path}.timeout`,
        `"${timeoutText}" is not a duration such as 10s or 1m`
      )
    }
    // Upstream logs a zero or negative timeout and uses the default instead.
    if (parsed > 0) timeoutMs = parsed
  }
  const mode = optionalString(webhook, 'responseUnMarshallMode', path)
  if (mode !== undefined && mode !== 'loose' && mode !== 'strict') {
    throw new ControllerSpecError(
      `${path}.responseUnMarshallMode`,
      `must be loose or strict, not "${mode}"`
    )
  }
  return { url: target, timeoutMs, decodeMode: mode }
}

function parseHook(value: unknown, path: string): HookSpec | undefined {
  const hook = optionalObject(value, path)
  if (hook === undefined) return undefined
  const version = optionalString(hook, 'version', path)
  if (version !== undefined && version !== '' && version !== 'v1' && version !== 'v2') {
    throw new ControllerSpecError(`${path}.version`, `must be v1 or v2, not "${version}"`)
  }
  return {
    version: version === 'v2' ? 'v2' : 'v1',
    webhook: parseWebhook(hook['webhook'], `${path}.webhook`),
  }
}

/**
 * Parses `spec` of a CompositeController.
 *
 * @throws {@link ControllerSpecError} naming the field and what is wrong with it.
 */
export function parseCompositeControllerSpec(spec: unknown): CompositeControllerSpec {
  const root = field(spec, 'spec')
  const parent = field(root['parentResource'], 'spec.parentResource')
  const parentRule = resourceRule(parent, 'spec.parentResource')
  const history = optionalObject(parent['revisionHistory'], 'spec.parentResource.revisionHistory')
  const fieldPaths = history?.['fieldPaths']
  if (
    fieldPaths !== undefined &&
    (!Array.isArray(fieldPaths) || fieldPaths.some((p) => typeof p !== 'string'))
  ) {
    throw new ControllerSpecError(
      'spec.parentResource.revisionHistory.fieldPaths',
      'must be a list of strings'
    )
  }
  const rawChildren = root['childResources'] ?? []
  if (!Array.isArray(rawChildren))
    throw new ControllerSpecError('spec.childResources', 'must be a list')
  const childResources = rawChildren.map((raw: unknown, i): ChildRule => {
    const at = `spec.childResources[${i}]`
    const rule = resourceRule(raw, at)
    const strategy = optionalObject(field(raw, at)['updateStrategy'], `${at}.updateStrategy`)
    const method =
      strategy === undefined
        ? undefined
        : optionalString(strategy, 'method', `${at}.updateStrategy`)
    if (method !== undefined && method !== '' && !UPDATE_METHODS.includes(method as UpdateMethod)) {
      throw new ControllerSpecError(
        `${at}.updateStrategy.method`,
        `must be one of ${UPDATE_METHODS.join(', ')}, not "${method}"`
      )
    }
    return {
      ...rule,
      updateMethod: method === undefined || method === '' ? 'OnDelete' : (method as UpdateMethod),
    }
  })
  const hooks = optionalObject(root['hooks'], 'spec.hooks')
  if (hooks === undefined) throw new ControllerSpecError('spec.hooks', 'no hooks defined')
  const resync = root['resyncPeriodSeconds']
  if (resync !== undefined && resync !== null && typeof resync !== 'number') {
    throw new ControllerSpecError('spec.resyncPeriodSeconds', 'must be a number')
  }
  return {
    parentResource: {
      ...parentRule,
      labelSelector: parseLabelSelector(
        parent['labelSelector'],
        'spec.parentResource.labelSelector'
      ),
      ignoreStatusChanges: optionalBoolean(parent, 'ignoreStatusChanges', 'spec.parentResource'),
      revisionFieldPaths: (fieldPaths as string[] | undefined) ?? ['spec'],
    },
    childResources,
    hooks: {
      sync: parseHook(hooks['sync'], 'spec.hooks.sync'),
      finalize: parseHook(hooks['finalize'], 'spec.hooks.finalize'),
      customize: parseHook(hooks['customize'], 'spec.hooks.customize'),
    },
    // Upstream clamps the period to at least one second.
    resyncPeriodMs: typeof resync === 'number' ? Math.max(resync, 1) * 1000 : undefined,
    generateSelector: optionalBoolean(root, 'generateSelector', 'spec'),
  }
}
