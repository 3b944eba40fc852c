/**
 * `metactl render`: runs a CompositeController's sync (or finalize) hook offline, for a parent
 * and optional observed children read from files, and prints the desired children and what the
 * engine would do about them. No cluster is needed.
 *
 * @remarks
 * Without discovery, child rules are resolved from the objects themselves: an object belongs to
 * the rule with its apiVersion whose resource is the lowercase plural of its kind, and a rule no
 * observed object names gets a well-known kind, or one guessed from its resource and corrected
 * from the desired children (see `offline-resources.ts` for the pluralization and the scopes).
 * Observed children are claimed as the engine would claim them (in the parent's namespace,
 * controlled by the parent or orphans, labels matching the selector); the others are left out
 * with a warning. Namespaced ones without a namespace get the parent's. A parent without a UID
 * gets {@link RENDER_PARENT_UID}, so that generated selectors, and so the output, are stable.
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Command, Option } from 'commander'
import { Agent } from 'undici'
import { stringify } from 'yaml'
import type { JsonObject, KubeObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import { compileLabelSelector } from '../../core/label-selector.js'
import { controllerRefOf, isDeleting } from '../../core/owner-references.js'
import {
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  parseCompositeControllerSpec,
  parseLabelSelector,
} from '../../api/composite-controller-spec.js'
import type { ChildRule, CompositeControllerSpec } from '../../api/composite-controller-spec.js'
import type {
  CompositeSyncRequest,
  CompositeSyncResponse,
  LabelSelectorSpec,
} from '../../api/hook-model.js'
import { gvkKey, uniformKey } from '../../api/hook-model.js'
import { hookCodec } from '../../api/wire/codecs.js'
import { CONTROLLER_UID_LABEL } from '../../engine/composite-kind.js'
import { InvalidDesiredChildError, prepareDesiredChildren } from '../../engine/desired-children.js'
import { planChildren } from '../../engine/plan-children.js'
import type { ChildPlan, ChildType, PlannedStep } from '../../engine/plan-children.js'
import { postWebhook } from '../../engine/post-webhook.js'
import { formatDiff } from './render-diff.js'
import { writtenChildren } from './render-written.js'
import { inProcessHooks } from '../../sdk/in-process.js'
import type { CompositeHook } from '../../sdk/hook-types.js'
import { parseManifests } from '../../testing/install-crds.js'
import { CliError } from '../cli-error.js'
import type { CliIo } from '../cli-io.js'
import { isClusterScoped, isResourceOf, kindOf } from '../offline-resources.js'

/** The UID `metactl render` gives a parent that has none. */
export const RENDER_PARENT_UID = '00000000-0000-0000-0000-render0000000'

interface RenderOptions {
  controller: string
  parent: string
  observed?: string[]
  hookUrl?: string
  hookModule?: string
  output: 'yaml' | 'json'
  finalizing?: boolean
  diff?: boolean
}

/** A hook to call, and what to call it in messages. */
interface RenderHook {
  readonly description: string
  call(request: CompositeSyncRequest): Promise<CompositeSyncResponse>
  close(): Promise<void>
}

/** A child rule with the kind it was resolved to. */
interface ResolvedRule {
  readonly rule: ChildRule
  readonly index: number
  kind: string
  /** Where the kind came from; a guessed kind may be corrected by the desired children. */
  source: 'observed' | 'well-known' | 'guessed' | 'desired'
}

/** What a render produced. */
interface RenderResult {
  readonly desired: readonly KubeObject[]
  /** The desired children as the engine leaves them (see render-written.ts). */
  readonly written: readonly KubeObject[]
  /** The plan against no observed children. */
  readonly fresh: ChildPlan
  readonly plan: ChildPlan
  readonly response: CompositeSyncResponse
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function describeObject(object: KubeObject): string {
  return `${object.kind} ${uniformKey(object) || '(no name)'} (${object.apiVersion})`
}

function readObjects(flag: string, path: string): KubeObject[] {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as { code?: unknown }).code
    throw new CliError(`${flag} ${path}: ${code === 'ENOENT' ? 'no such file' : messageOf(error)}`)
  }
  try {
    return parseManifests(text, `${flag} ${path}`)
  } catch (error) {
    throw new CliError(messageOf(error))
  }
}

function readController(path: string): { object: KubeObject; spec: CompositeControllerSpec } {
  const objects = readObjects('--controller', path)
  const controllers = objects.filter((o) => o.kind === 'CompositeController')
  const [object] = controllers
  if (object === undefined || controllers.length > 1) {
    const found =
      controllers.length > 1
        ? `${controllers.length} CompositeControllers`
        : objects.map((o) => o.kind).join(', ') || 'nothing'
    throw new CliError(`--controller ${path}: expected one CompositeController, found ${found}`)
  }
  try {
    return { object, spec: parseCompositeControllerSpec(object['spec']) }
  } catch (error) {
    throw new CliError(
      `--controller ${path}: invalid CompositeController ${object.metadata.name ?? ''}: ${messageOf(error)}`
    )
  }
}

function readParent(
  path: string,
  spec: CompositeControllerSpec,
  warn: (line: string) => void
): KubeObject {
  const objects = readObjects('--parent', path)
  const [first] = objects
  if (first === undefined || objects.length > 1) {
    throw new CliError(`--parent ${path}: expected one object, found ${objects.length}`)
  }
  const parent = structuredClone(first)
  const rule = spec.parentResource
  if (parent.apiVersion !== rule.apiVersion) {
    throw new CliError(
      `--parent ${path}: ${describeObject(parent)} is not the controller's parent resource ` +
        `(${rule.apiVersion} ${rule.resource})`
    )
  }
  if (!isResourceOf(parent.kind, rule.resource)) {
    warn(
      `warning: the parent's kind ${parent.kind} does not look like resource ${rule.resource}; ` +
        'rendering anyway'
    )
  }
  if (parent.metadata.uid === undefined || parent.metadata.uid === '') {
    parent.metadata.uid = RENDER_PARENT_UID
  }
  return parent
}

function selectorOf(
  spec: CompositeControllerSpec,
  parent: KubeObject
): { labels: Record<string, string>; selector: LabelSelectorSpec } {
  if (spec.generateSelector) {
    const labels = { [CONTROLLER_UID_LABEL]: parent.metadata.uid ?? '' }
    return { labels, selector: { matchLabels: labels } }
  }
  const parentSpec = parent['spec']
  let selector: LabelSelectorSpec | undefined
  try {
    selector = parseLabelSelector(
      isJsonObject(parentSpec) ? parentSpec['selector'] : undefined,
      'spec.selector'
    )
  } catch (error) {
    throw new CliError(`--parent: can't get label selector: ${messageOf(error)}`)
  }
  if (
    selector === undefined ||
    (Object.keys(selector.matchLabels ?? {}).length === 0 &&
      (selector.matchExpressions ?? []).length === 0)
  ) {
    throw new CliError(
      '--parent: .spec.selector must have either matchLabels, matchExpressions, or both ' +
        '(or set spec.generateSelector on the controller)'
    )
  }
  return { labels: {}, selector }
}

/**
 * Tells why the engine would not claim an observed child (Kubernetes' ControllerRefManager
 * rules, as `claimChildren` applies them), or `undefined` when it would.
 */
function unclaimedReason(
  child: KubeObject,
  parent: KubeObject,
  matches: (labels: Readonly<Record<string, string>>) => boolean
): string | undefined {
  const parentNamespace = parent.metadata.namespace ?? ''
  const namespace = child.metadata.namespace ?? ''
  if (parentNamespace !== '' && namespace !== parentNamespace) {
    return `it is in namespace ${namespace || '(none)'}, not the parent's ${parentNamespace}`
  }
  const ref = controllerRefOf(child)
  if (ref !== undefined && ref.uid !== parent.metadata.uid) {
    return `it is controlled by ${ref.kind} ${ref.name} (uid ${ref.uid}), not by the parent`
  }
  if (!matches(child.metadata.labels ?? {})) {
    return ref === undefined
      ? "its labels do not match the parent's selector, so the engine would not adopt it"
      : "its labels do not match the parent's selector, so the engine would release it"
  }
  if (ref === undefined && (isDeleting(child) || isDeleting(parent))) {
    return 'the engine does not adopt an orphan while it or the parent is being deleted'
  }
  return undefined
}

function versionOf(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/')
  return slash === -1
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) }
}

function isNamespaced(rule: ResolvedRule): boolean {
  return !isClusterScoped(rule.rule.apiVersion, rule.kind)
}

function typeOf(rule: ResolvedRule): string {
  return gvkKey(rule.rule.apiVersion, rule.kind)
}

function describeRule(rule: ResolvedRule): string {
  return `childResources[${rule.index}] (${rule.rule.apiVersion} ${rule.rule.resource})`
}

/** Resolves every child rule's kind and sorts the observed children into them. */
function resolveObserved(
  spec: CompositeControllerSpec,
  parent: KubeObject,
  observed: readonly { readonly object: KubeObject; readonly file: string }[]
): { rules: ResolvedRule[]; byRule: Map<ResolvedRule, Map<string, KubeObject>> } {
  const rules: ResolvedRule[] = spec.childResources.map((rule, index) => ({
    rule,
    index,
    kind: '',
    source: 'guessed',
  }))
  const byRule = new Map(rules.map((rule) => [rule, new Map<string, KubeObject>()]))
  const parentNamespace = parent.metadata.namespace ?? ''
  for (const { object: raw, file } of observed) {
    const rule = rules.find(
      (r) => r.rule.apiVersion === raw.apiVersion && isResourceOf(raw.kind, r.rule.resource)
    )
    if (rule === undefined) {
      const declared = rules.map((r) => `${r.rule.apiVersion} ${r.rule.resource}`).join(', ')
      throw new CliError(
        `--observed ${file}: ${describeObject(raw)} matches no childResources rule ` +
          `(declared: ${declared || 'none'}); a kind matches the rule whose resource is its ` +
          'lowercase plural'
      )
    }
    if (rule.source === 'observed' && rule.kind !== raw.kind) {
      throw new CliError(
        `--observed ${file}: ${describeObject(raw)} and ${rule.kind} objects both match ${describeRule(rule)}`
      )
    }
    rule.kind = raw.kind
    rule.source = 'observed'
    const child = structuredClone(raw)
    const namespace = child.metadata.namespace
    if (isNamespaced(rule) && (namespace === undefined || namespace === '') && parentNamespace) {
      child.metadata.namespace = parentNamespace
    }
    const children = byRule.get(rule) ?? new Map<string, KubeObject>()
    const key = uniformKey(child)
    if (children.has(key)) {
      throw new CliError(`--observed ${file}: ${describeObject(child)} appears twice`)
    }
    children.set(key, child)
  }
  for (const rule of rules) {
    if (rule.source === 'observed') continue
    const { kind, guessed } = kindOf(rule.rule.apiVersion, rule.rule.resource)
    rule.kind = kind
    rule.source = guessed ? 'guessed' : 'well-known'
  }
  return { rules, byRule }
}

/** Corrects guessed kinds from the desired children, which name their kinds. */
function correctGuesses(
  rules: readonly ResolvedRule[],
  children: readonly KubeObject[],
  warn: (line: string) => void
): void {
  for (const rule of rules) {
    if (rule.source !== 'guessed') continue
    const child = children.find(
      (c) =>
        isJsonObject(c) &&
        c.apiVersion === rule.rule.apiVersion &&
        typeof c.kind === 'string' &&
        isResourceOf(c.kind, rule.rule.resource)
    )
    if (child === undefined || child.kind === rule.kind) continue
    warn(
      `warning: the request keyed ${describeRule(rule)} as ${typeOf(rule)}, guessed from the ` +
        `resource, but the hook returned kind ${child.kind}; pass an observed ${child.kind} to ` +
        'key the request right'
    )
    rule.kind = child.kind
    rule.source = 'desired'
  }
}

function webhookHook(
  url: string,
  spec: CompositeControllerSpec,
  finalizing: boolean,
  warn: (line: string) => void
): RenderHook {
  try {
    new URL(url)
  } catch {
    throw new CliError(`--hook-url: "${url}" is not a valid URL`)
  }
  const hookSpec = finalizing ? (spec.hooks.finalize ?? spec.hooks.sync) : spec.hooks.sync
  const codec = hookCodec(hookSpec?.version)
  const agent = new Agent()
  const name = finalizing ? 'finalize' : 'sync'
  return {
    description: `hook ${url} (${codec.version})`,
    call: async (request) => {
      const text = await postWebhook(url, codec.encodeCompositeSync(request), {
        timeoutMs: hookSpec?.webhook?.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
        dispatcher: agent,
      })
      const decoded = codec.decodeCompositeSync(text, {
        hook: name,
        mode: hookSpec?.webhook?.decodeMode,
      })
      for (const warning of decoded.warnings) warn(`warning: hook response: ${warning}`)
      return decoded.response
    },
    close: () => agent.close(),
  }
}

function functionExports(module: Record<string, unknown>): string[] {
  return Object.keys(module).filter((name) => typeof module[name] === 'function')
}

async function moduleHook(specifier: string, finalizing: boolean): Promise<RenderHook> {
  const hash = specifier.lastIndexOf('#')
  const file = hash === -1 ? specifier : specifier.slice(0, hash)
  const requested = hash === -1 ? undefined : specifier.slice(hash + 1)
  const path = resolve(file)
  if (!existsSync(path)) {
    throw new CliError(`--hook-module ${specifier}: no such file (looked for ${path})`)
  }
  let module: Record<string, unknown>
  try {
    module = (await import(pathToFileURL(path).href)) as Record<string, unknown>
  } catch (error) {
    const code = (error as { code?: unknown }).code
    const hint =
      code === 'ERR_UNKNOWN_FILE_EXTENSION'
        ? ' (to load a TypeScript module, run metactl under tsx: node --import tsx ...)'
        : ''
    throw new CliError(
      `--hook-module ${specifier}: cannot import ${path}: ${messageOf(error)}${hint}`
    )
  }
  const preferred = finalizing && typeof module['finalize'] === 'function' ? 'finalize' : 'sync'
  const name =
    requested ??
    (typeof module[preferred] !== 'function' && typeof module['default'] === 'function'
      ? 'default'
      : preferred)
  const hook = module[name]
  if (typeof hook !== 'function') {
    const found = functionExports(module).join(', ') || 'none'
    throw new CliError(
      `--hook-module ${specifier}: ${file} has no function export "${name}" ` +
        `(function exports: ${found}); name one with ${file}#<export>`
    )
  }
  const adapted = inProcessHooks(
    finalizing ? { finalize: hook as CompositeHook } : { sync: hook as CompositeHook }
  )
  const call = finalizing ? adapted.finalize : adapted.sync
  if (call === undefined) throw new Error('inProcessHooks dropped the hook')
  const signal = new AbortController().signal
  return {
    description: `hook ${file}#${name}`,
    call: (request) => call(request, signal),
    close: () => Promise.resolve(),
  }
}

async function renderChildren(
  opts: RenderOptions,
  warn: (line: string) => void
): Promise<RenderResult> {
  if ((opts.hookUrl === undefined) === (opts.hookModule === undefined)) {
    throw new CliError('give exactly one of --hook-url and --hook-module')
  }
  const controller = readController(opts.controller)
  const { spec } = controller
  const parent = readParent(opts.parent, spec, warn)
  const observedObjects = (opts.observed ?? []).flatMap((file) =>
    readObjects('--observed', file).map((object) => ({ object, file }))
  )
  const { rules, byRule } = resolveObserved(spec, parent, observedObjects)
  const selection = selectorOf(spec, parent)
  const matches = compileLabelSelector(selection.selector)
  for (const children of byRule.values()) {
    for (const [key, child] of children) {
      const reason = unclaimedReason(child, parent, matches)
      if (reason === undefined) continue
      warn(`warning: observed ${describeObject(child)} is left out: ${reason}`)
      children.delete(key)
    }
  }
  const finalizing = opts.finalizing === true
  if (finalizing && spec.hooks.finalize === undefined) {
    warn('warning: the controller has no finalize hook; the engine never sends finalizing: true')
  }
  if (spec.hooks.customize !== undefined) {
    warn('warning: the customize hook is not called offline; related objects are empty')
  }

  const request: CompositeSyncRequest = {
    controller: { ...controller.object, status: controller.object['status'] ?? {} },
    parent,
    children: new Map(rules.map((rule) => [typeOf(rule), byRule.get(rule) ?? new Map()])),
    related: new Map(),
    finalizing,
  }
  const hook =
    opts.hookUrl === undefined
      ? await moduleHook(opts.hookModule ?? '', finalizing)
      : webhookHook(opts.hookUrl, spec, finalizing, warn)
  let response: CompositeSyncResponse
  try {
    response = await hook.call(request)
  } catch (error) {
    throw new CliError(`${hook.description} failed: ${messageOf(error)}`)
  } finally {
    await hook.close()
  }

  correctGuesses(rules, response.children, warn)
  let desired
  try {
    desired = prepareDesiredChildren(response.children, {
      parent,
      declaredTypes: new Set(rules.map(typeOf)),
      namespaced: new Map(rules.map((rule) => [typeOf(rule), isNamespaced(rule)])),
      injectLabels: selection.labels,
      matchesSelector: matches,
    })
  } catch (error) {
    if (error instanceof InvalidDesiredChildError) {
      throw new CliError(`${hook.description} returned invalid children: ${error.message}`)
    }
    throw error
  }
  const types = new Map<string, ChildType>(
    rules.map((rule) => [
      typeOf(rule),
      {
        ref: {
          ...versionOf(rule.rule.apiVersion),
          resource: rule.rule.resource,
          namespaced: isNamespaced(rule),
        },
        updateMethod: rule.rule.updateMethod,
      },
    ])
  )
  const observed = new Map(rules.map((rule) => [typeOf(rule), byRule.get(rule) ?? new Map()]))
  const plan = planChildren(observed, desired, types, parent)
  const fresh = planChildren(new Map(), desired, types, parent)
  return {
    desired: [...desired.values()].flatMap((children) => [...children.values()]),
    written: writtenChildren(desired, plan, fresh),
    fresh,
    plan,
    response,
  }
}

function yamlLines(value: unknown): string[] {
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false }).trimEnd().split('\n')
}

function planLine(
  step: PlannedStep | ChildPlan['unchanged'][number] | ChildPlan['skipped'][number]
): string {
  const what = `${step.type} ${step.key}`
  switch (step.op) {
    case 'create':
    case 'delete':
    case 'unchanged':
      return `${step.op.padEnd(10)} ${what}`
    case 'update':
    case 'recreate':
      return `${step.op.padEnd(10)} ${what} (${step.method})`
    case 'skip':
      return `${'skip'.padEnd(10)} ${what} (${step.reason === 'Deleting' ? 'being deleted' : step.reason})`
    case 'fail':
      return `${'error'.padEnd(10)} ${what}: ${messageOf(step.error)}`
    default: {
      const unreachable: never = step
      return String(unreachable)
    }
  }
}

/** The YAML output: a valid YAML stream, the plan and status in comments after the children. */
function formatText(result: RenderResult): string[] {
  const lines: string[] = []
  for (const child of result.written) lines.push('---', ...yamlLines(child))
  if (result.written.length === 0) lines.push('# No desired children.')
  const { plan, response } = result
  const entries = [...plan.steps, ...plan.unchanged, ...plan.skipped]
  lines.push('# Plan:')
  if (entries.length === 0) lines.push('#   nothing to do')
  for (const entry of entries) lines.push(`#   ${planLine(entry)}`)
  const status = response.status
  if (status === null || Object.keys(status).length === 0) {
    lines.push(`# Status: ${status === null ? 'null' : '{}'}`)
  } else {
    lines.push('# Status:', ...yamlLines(status).map((line) => `#   ${line}`))
  }
  lines.push(`# resyncAfterSeconds: ${response.resyncAfterMs / 1000}`)
  lines.push(`# finalized: ${String(response.finalized)}`)
  return lines
}

/** The JSON output: one object. */
function formatJson(result: RenderResult): string {
  const { plan, response } = result
  const entry = (e: { type: string; key: string }): JsonObject => ({ type: e.type, key: e.key })
  return JSON.stringify(
    {
      desired: result.desired,
      plan: {
        create: plan.create.map((e) => ({ ...entry(e), object: e.object })),
        update: plan.update.map((e) => ({ ...entry(e), method: e.method, object: e.object })),
        recreate: plan.recreate.map((e) => ({ ...entry(e), method: e.method })),
        delete: plan.delete.map(entry),
        unchanged: plan.unchanged.map(entry),
        skipped: plan.skipped.map((e) => ({ ...entry(e), reason: e.reason })),
        failed: plan.failed.map((e) => ({ ...entry(e), error: messageOf(e.error) })),
      },
      status: response.status,
      resyncAfterSeconds: response.resyncAfterMs / 1000,
      finalized: response.finalized,
    },
    null,
    2
  )
}

async function render(io: CliIo, opts: RenderOptions): Promise<void> {
  const result = await renderChildren(opts, (line) => {
    io.err(line)
  })
  if (opts.diff === true) {
    for (const line of formatDiff(result.plan, result.fresh)) io.out(line)
  } else if (opts.output === 'json') {
    io.out(formatJson(result))
  } else {
    for (const line of formatText(result)) io.out(line)
  }
  const failed = result.plan.failed.length
  if (failed > 0) {
    throw new CliError(
      `${failed} child${failed === 1 ? '' : 'ren'} cannot be written; see the plan`
    )
  }
}

/** Builds `metactl render`. */
export function renderCommand(io: CliIo): Command {
  return new Command('render')
    .description(
      'run a sync hook offline for a parent and print the desired children and the plan ' +
        'against the observed ones (no cluster needed)'
    )
    .requiredOption('--controller <file>', 'CompositeController manifest (YAML or JSON)')
    .requiredOption('--parent <file>', 'parent object manifest')
    .option(
      '--observed <files...>',
      'observed children, multi-document YAML (repeatable); claimed as the engine would'
    )
    .option('--hook-url <url>', 'call the hook at this URL, with the hooks.sync.version protocol')
    .option(
      '--hook-module <path[#export]>',
      'import a .ts/.js module and call its SDK hook export (default: sync, else default)'
    )
    .addOption(
      new Option('--output <format>', 'output format').choices(['yaml', 'json']).default('yaml')
    )
    .option('--finalizing', 'send finalizing: true (calls the finalize export of a module)')
    .option('--diff', 'print a diff per child between observed and what the engine would write')
    .addHelpText(
      'after',
      [
        '',
        'The output is a YAML stream of the desired children, with the plan (create, update,',
        'recreate, delete, unchanged, skip) and the hook status as comments; --output json prints',
        'one object {desired, plan, status, resyncAfterSeconds, finalized}. The children are',
        'printed as the engine leaves them (last-applied annotation, controller reference), so the',
        'output can be fed back as --observed. --diff prints a diff per changed child instead.',
        '',
        'Examples:',
        '  metactl render --controller cc.yaml --parent parent.yaml --hook-module ./hook.ts',
        '  metactl render --controller cc.yaml --parent parent.yaml --observed children.yaml \\',
        '    --hook-url http://127.0.0.1:8080/sync --output json',
      ].join('\n')
    )
    .action(async (opts: RenderOptions) => {
      await render(io, opts)
    })
}
