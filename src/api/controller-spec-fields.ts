/**
 * Field parsers shared by the CompositeController and DecoratorController spec parsers.
 *
 * @remarks
 * Both CRDs use the same building blocks (resource rules, label selectors, hooks and webhooks,
 * update strategies, `resyncPeriodSeconds`), and both must apply the same defaults and report the
 * same errors for them, so each building block is parsed here once. Every parser takes the dot
 * path of the value it reads and throws a {@link ControllerSpecError} naming the offending field.
 *
 * @module
 */
import { parseGoDuration } from '../core/go-duration.js'
import { MAX_TIMER_DELAY_MS } from '../core/timeout-signal.js'
import type { JsonObject } from '../core/kube-object.js'
import type { LabelSelectorRequirement } from '../core/label-selector.js'
import { LabelSelectorError } from '../core/label-selector-error.js'
import { ControllerSpecError } from './controller-spec-error.js'
import { field, optionalObject, optionalString, requiredString } from './spec-field-readers.js'
import type { HookVersion, LabelSelectorSpec, ResponseDecodeMode } from './hook-model.js'
import type { EndpointConfigSpec, EtagSpec, WebhookSecuritySpec } from './webhook-security-spec.js'
import { parseEndpointConfigs, parseEtag, parseWebhookSecurity } from './webhook-security-spec.js'

/** A resource named by apiVersion and plural resource name. */
export interface ResourceRule {
  readonly apiVersion: string
  readonly resource: string
}

/** How existing children that differ from the desired state are updated. */
export type UpdateMethod =
  'OnDelete' | 'Recreate' | 'InPlace' | 'RollingRecreate' | 'RollingInPlace'

/** Every update method, in the order error messages list them. */
export const UPDATE_METHODS: readonly UpdateMethod[] = [
  'OnDelete',
  'Recreate',
  'InPlace',
  'RollingRecreate',
  'RollingInPlace',
]

/**
 * One condition a rolling child must show before the rollout moves on
 * (`updateStrategy.statusChecks.conditions[]`): a `status.conditions[]` entry of this `type`,
 * with this `status` and `reason` when they are given.
 */
export interface StatusConditionCheck {
  readonly type: string
  readonly status?: string
  readonly reason?: string
}

/** A child rule of a CompositeController, or an attachment rule of a DecoratorController. */
export interface ChildRule extends ResourceRule {
  readonly updateMethod: UpdateMethod
  /** `updateStrategy.statusChecks.conditions`; empty when absent (rolling methods only). */
  readonly statusChecks: readonly StatusConditionCheck[]
}

/** Where and how a webhook is called. */
export interface WebhookSpec {
  /** Full URL (from `url`, or built from `service` + `path`). */
  readonly url: string
  readonly timeoutMs: number
  /** Explicit `responseUnMarshallMode`; the version's default applies when absent. */
  readonly decodeMode: ResponseDecodeMode | undefined
  /** The webhook's own TLS and auth fields; when set, `endpointConfigs` are not consulted. */
  readonly security?: WebhookSecuritySpec
  /** ETag response caching, when enabled. */
  readonly etag?: EtagSpec
}

/** One hook: its protocol version and, when enabled, its webhook. */
export interface HookSpec {
  readonly version: HookVersion
  /** Absent for a hook with no webhook (upstream: "disabled"). */
  readonly webhook: WebhookSpec | undefined
}

/** The hooks both controller kinds use; each is absent when the spec does not name it. */
export interface ControllerHooks {
  readonly sync: HookSpec | undefined
  readonly finalize: HookSpec | undefined
  readonly customize: HookSpec | undefined
  /** `spec.endpointConfigs`: per-host TLS and auth, for webhooks that set none themselves. */
  readonly endpointConfigs?: readonly EndpointConfigSpec[]
}

/** Default webhook timeout (10 s). */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000

/** Reads the `apiVersion` and `resource` of a rule object at `path`. */
export function resourceRule(value: unknown, path: string): ResourceRule {
  const object = field(value, path)
  const apiVersion = requiredString(object, 'apiVersion', path)
  // A malformed apiVersion can never be served: refusing it here makes it a terminal spec error
  // instead of an unknown resource that is retried forever.
  if (!API_VERSION.test(apiVersion))
    throw new ControllerSpecError(
      `${path}.apiVersion`,
      `"${apiVersion}" is not an apiVersion: use version or group/version, e.g. v1 or apps/v1`
    )
  return { apiVersion, resource: requiredString(object, 'resource', path) }
}

/** `version` or `group/version`: a DNS-subdomain group and a DNS-label version. */
const API_VERSION = /^(?:[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?\/)?[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/

/** The two parts of a selector object, shape-checked; absent parts are undefined. */
export interface SelectorParts {
  /** The exact-match map (`matchLabels` or `matchAnnotations`). */
  readonly exact: Record<string, string> | undefined
  readonly matchExpressions: LabelSelectorRequirement[] | undefined
}

/**
 * Shape-checks a selector object whose exact-match map is called `exactField`.
 *
 * @remarks
 * Label and annotation selectors differ only in that name, so both are read here. Only the shape
 * is checked; key and value syntax is the business of the compiled matchers in `core/`.
 */
export function parseSelectorParts(
  value: unknown,
  path: string,
  exactField: 'matchLabels' | 'matchAnnotations'
): SelectorParts | undefined {
  const object = optionalObject(value, path)
  if (object === undefined) return undefined
  const exactObject = optionalObject(object[exactField], `${path}.${exactField}`)
  const entries = Object.entries(exactObject ?? {})
  for (const [key, entry] of entries) {
    if (typeof entry !== 'string') {
      throw new ControllerSpecError(`${path}.${exactField}.${key}`, 'must be a string')
    }
  }
  // fromEntries defines own properties: an assignment would drop a `__proto__` key (JSON.parse
  // makes it an ordinary key) and so turn an invalid selector into one that matches everything.
  const exact = Object.fromEntries(entries) as Record<string, string>
  const rawExpressions = object['matchExpressions']
  if (rawExpressions !== undefined && rawExpressions !== null && !Array.isArray(rawExpressions)) {
    throw new ControllerSpecError(`${path}.matchExpressions`, 'must be a list')
  }
  const expressions = ((rawExpressions ?? []) as unknown[]).map((raw, i) =>
    selectorRequirement(raw, `${path}.matchExpressions[${i}]`)
  )
  return {
    exact: exactObject === undefined ? undefined : exact,
    matchExpressions:
      rawExpressions === undefined || rawExpressions === null ? undefined : expressions,
  }
}

function selectorRequirement(raw: unknown, at: string): LabelSelectorRequirement {
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
    operator: operator as LabelSelectorRequirement['operator'],
    ...(Array.isArray(values) ? { values: values as string[] } : {}),
  }
}

/**
 * Compiles a selector once so that its semantic problems (operators with or without values, key
 * and value syntax) are reported as a {@link ControllerSpecError} on its field.
 */
export function checkSelector(compile: () => unknown, path: string): void {
  try {
    compile()
  } catch (error) {
    if (error instanceof LabelSelectorError) throw new ControllerSpecError(path, error.message)
    throw error
  }
}

/** Parses a label selector object, checking its shape (not its semantics). */
export function parseLabelSelector(value: unknown, path: string): LabelSelectorSpec | undefined {
  const parts = parseSelectorParts(value, path, 'matchLabels')
  if (parts === undefined) return undefined
  return {
    ...(parts.exact === undefined ? {} : { matchLabels: parts.exact }),
    ...(parts.matchExpressions === undefined ? {} : { matchExpressions: parts.matchExpressions }),
  }
}

/** Parses a webhook object; undefined when absent (a "disabled" hook). */
export function parseWebhook(value: unknown, path: string): WebhookSpec | undefined {
  const webhook = optionalObject(value, path)
  if (webhook === undefined) return undefined
  const target = webhookUrl(webhook, path)
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
    // Upstream logs a zero or negative timeout and uses the default instead. A timeout beyond
    // what a Node timer can wait for is capped, or every call would time out after 1 ms.
    if (parsed > 0) timeoutMs = Math.min(parsed, MAX_TIMER_DELAY_MS)
  }
  const mode = optionalString(webhook, 'responseUnMarshallMode', path)
  if (mode !== undefined && mode !== 'loose' && mode !== 'strict') {
    throw new ControllerSpecError(
      `${path}.responseUnMarshallMode`,
      `must be loose or strict, not "${mode}"`
    )
  }
  const security = parseWebhookSecurity(webhook, path)
  const etag = parseEtag(webhook['etag'], `${path}.etag`)
  return {
    url: target,
    timeoutMs,
    decodeMode: mode,
    ...(security === undefined ? {} : { security }),
    ...(etag === undefined ? {} : { etag }),
  }
}

/** Builds the URL of a webhook: `url`, else `{protocol}://{name}.{namespace}:{port}{path}`. */
function webhookUrl(webhook: JsonObject, path: string): string {
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
  return target
}

/** Parses one hook; undefined when absent. An absent or empty version means v1. */
export function parseHook(value: unknown, path: string): HookSpec | undefined {
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
 * Returns `spec.hooks`, which both controller kinds require.
 *
 * @remarks
 * Separate from {@link parseHooks} so that a parser can report a missing `hooks` before it
 * looks at later fields, and the hooks themselves after them.
 */
export function requiredHooks(root: JsonObject, path: string): JsonObject {
  const hooks = optionalObject(root['hooks'], `${path}.hooks`)
  // Upstream refuses to create a controller without hooks, in these words.
  if (hooks === undefined) throw new ControllerSpecError(`${path}.hooks`, 'no hooks defined')
  return hooks
}

/**
 * Parses the sync, finalize and customize hooks of a `hooks` object at `path`, with the
 * controller's `endpointConfigs` (read from `root`, the spec) that apply to them.
 */
export function parseHooks(hooks: JsonObject, path: string, root?: JsonObject): ControllerHooks {
  const endpointConfigs = parseEndpointConfigs(root?.['endpointConfigs'], 'spec.endpointConfigs')
  return {
    sync: parseHook(hooks['sync'], `${path}.sync`),
    finalize: parseHook(hooks['finalize'], `${path}.finalize`),
    customize: parseHook(hooks['customize'], `${path}.customize`),
    ...(endpointConfigs.length === 0 ? {} : { endpointConfigs }),
  }
}

/**
 * Parses a list of child (or attachment) rules; absent or null means none.
 *
 * @remarks
 * An absent strategy or an empty method means OnDelete, as upstream: existing objects are then
 * never updated.
 */
export function parseChildRules(value: unknown, path: string): ChildRule[] {
  const rules = value ?? []
  if (!Array.isArray(rules)) throw new ControllerSpecError(path, 'must be a list')
  return rules.map((raw: unknown, i): ChildRule => {
    const at = `${path}[${i}]`
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
      statusChecks: parseStatusChecks(
        strategy?.['statusChecks'],
        `${at}.updateStrategy.statusChecks`
      ),
    }
  })
}

/** Reads `updateStrategy.statusChecks` at `path`; absent means no checks. */
export function parseStatusChecks(value: unknown, path: string): StatusConditionCheck[] {
  const checks = optionalObject(value, path)
  const conditions = checks?.['conditions'] ?? []
  if (!Array.isArray(conditions))
    throw new ControllerSpecError(`${path}.conditions`, 'must be a list')
  return conditions.map((raw: unknown, i): StatusConditionCheck => {
    const at = `${path}.conditions[${i}]`
    const condition = field(raw, at)
    const status = optionalString(condition, 'status', at)
    const reason = optionalString(condition, 'reason', at)
    return {
      type: requiredString(condition, 'type', at),
      ...(status === undefined ? {} : { status }),
      ...(reason === undefined ? {} : { reason }),
    }
  })
}

/** Reads `resyncPeriodSeconds` of `root` (at `path`) in milliseconds; undefined when absent. */
export function parseResyncPeriodMs(root: JsonObject, path: string): number | undefined {
  const resync = root['resyncPeriodSeconds']
  if (resync !== undefined && resync !== null && typeof resync !== 'number') {
    throw new ControllerSpecError(`${path}.resyncPeriodSeconds`, 'must be a number')
  }
  // Upstream clamps the period to at least one second. A period beyond what a Node timer can
  // wait for (about 24.8 days) is capped, or the resync would run every millisecond.
  return typeof resync === 'number'
    ? Math.min(Math.max(resync, 1) * 1000, MAX_TIMER_DELAY_MS)
    : undefined
}
