/**
 * What `metactl render` does the same for both controller kinds: reading manifests, resolving
 * child (or attachment) rules offline, importing hook modules, and printing plans.
 *
 * @remarks
 * Without discovery, rules are resolved from the objects themselves: an object belongs to the
 * rule with its apiVersion whose resource is the lowercase plural of its kind, and a rule no
 * observed object names gets a well-known kind, or one guessed from its resource and corrected
 * from the desired objects (see `offline-resources.ts` for the pluralization and the scopes).
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { stringify } from 'yaml'
import type { JsonObject, KubeObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import { objectKey } from '../../core/object-key.js'
import type { ChildRule } from '../../api/composite-controller-spec.js'
import { gvkKey } from '../../api/hook-model.js'
import { planChildren } from '../../engine/children/plan-children.js'
import type { ChildPlan, ChildType, PlannedStep } from '../../engine/children/plan-children.js'
import type { SyncPlan } from '../../engine/sync/plan-sync.js'
import { parseManifests } from '../../cluster/install-crds.js'
import { CliError } from '../cli-error.js'
import { isClusterScoped, isResourceOf, kindOf } from '../offline-resources.js'
import { writtenChildren } from './render-written.js'

/** The UID `metactl render` gives a parent that has none. */
export const RENDER_PARENT_UID = '00000000-0000-0000-0000-render0000000'

/** The options of `metactl render`. */
export interface RenderOptions {
  controller: string
  parent: string
  observed?: string[]
  hookUrl?: string
  hookModule?: string
  output: 'yaml' | 'json'
  finalizing?: boolean
  diff?: boolean
}

/** Which list of the controller's spec a rule comes from. */
export type RuleField = 'childResources' | 'attachments'

/** A child (or attachment) rule with the kind it was resolved to. */
export interface ResolvedRule {
  readonly rule: ChildRule
  readonly field: RuleField
  readonly index: number
  kind: string
  /** Where the kind came from; a guessed kind may be corrected by the desired objects. */
  source: 'observed' | 'well-known' | 'guessed' | 'desired'
}

/** The message of an error, or the value as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** `Kind key (apiVersion)`, for messages. */
export function describeObject(object: KubeObject): string {
  return `${object.kind} ${objectKey(object) || '(no name)'} (${object.apiVersion})`
}

/** Reads the objects of a manifest file named by a flag; errors name the flag and file. */
export function readObjects(flag: string, path: string): KubeObject[] {
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

/**
 * Reads the one object a `--parent` file holds and checks it is of the given resource; a parent
 * without a UID gets {@link RENDER_PARENT_UID}, so that generated selectors, and so the output,
 * are stable.
 */
export function readParentObject(
  path: string,
  rules: readonly { readonly apiVersion: string; readonly resource: string }[],
  warn: (line: string) => void
): KubeObject {
  const objects = readObjects('--parent', path)
  const [first] = objects
  if (first === undefined || objects.length > 1) {
    throw new CliError(`--parent ${path}: expected one object, found ${objects.length}`)
  }
  const parent = structuredClone(first)
  const sameVersion = rules.filter((rule) => rule.apiVersion === parent.apiVersion)
  if (sameVersion.length === 0) {
    const named = rules.map((rule) => `${rule.apiVersion} ${rule.resource}`).join(', ')
    const what =
      rules.length === 1 ? "the controller's parent resource" : "one of the controller's resources"
    throw new CliError(`--parent ${path}: ${describeObject(parent)} is not ${what} (${named})`)
  }
  if (!sameVersion.some((rule) => isResourceOf(parent.kind, rule.resource))) {
    const resources = sameVersion.map((rule) => rule.resource).join(', ')
    warn(
      `warning: the parent's kind ${parent.kind} does not look like resource ${resources}; ` +
        'rendering anyway'
    )
  }
  if (parent.metadata.uid === undefined || parent.metadata.uid === '') {
    parent.metadata.uid = RENDER_PARENT_UID
  }
  return parent
}

/** Splits an apiVersion into group and version. */
export function versionOf(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/')
  return slash === -1
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) }
}

/** Whether a resolved rule's objects are namespaced. */
export function isNamespaced(rule: ResolvedRule): boolean {
  return !isClusterScoped(rule.rule.apiVersion, rule.kind)
}

/** The GVK key of a resolved rule, e.g. `Pod.v1`. */
export function typeOf(rule: ResolvedRule): string {
  return gvkKey(rule.rule.apiVersion, rule.kind)
}

function describeRule(rule: ResolvedRule): string {
  return `${rule.field}[${rule.index}] (${rule.rule.apiVersion} ${rule.rule.resource})`
}

/** The declared types of resolved rules, as the engine's planner takes them. */
export function childTypesOf(rules: readonly ResolvedRule[]): Map<string, ChildType> {
  return new Map(
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
}

/** Resolves every child rule's kind and sorts the observed children into them. */
export function resolveObserved(
  declared: readonly ChildRule[],
  field: RuleField,
  parent: KubeObject,
  observed: readonly { readonly object: KubeObject; readonly file: string }[]
): { rules: ResolvedRule[]; byRule: Map<ResolvedRule, Map<string, KubeObject>> } {
  const rules: ResolvedRule[] = declared.map((rule, index) => ({
    rule,
    field,
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
        `--observed ${file}: ${describeObject(raw)} matches no ${field} rule ` +
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
    const key = objectKey(child)
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
export function correctGuesses(
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

function functionExports(module: Record<string, unknown>): string[] {
  return Object.keys(module).filter((name) => typeof module[name] === 'function')
}

/** An SDK hook function imported from a module, and its name for messages. */
export interface ImportedHook {
  readonly description: string
  readonly hook: unknown
}

/**
 * Imports a `--hook-module path[#export]` and picks the hook: the named export, else `finalize`
 * when finalizing and present, else `sync`, else `default`.
 */
export async function importHookModule(
  specifier: string,
  finalizing: boolean
): Promise<ImportedHook> {
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
  return { description: `hook ${file}#${name}`, hook }
}

/** A value as YAML lines. */
export function yamlLines(value: unknown): string[] {
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false }).trimEnd().split('\n')
}

/** One line of the plan, as the text output prints it. */
export function planLine(
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

/**
 * The plan against no observed children, and every desired child as the engine would leave it
 * (see `render-written.ts`), for output that round-trips as `--observed`.
 */
export function writtenForm(
  plan: SyncPlan,
  types: ReadonlyMap<string, ChildType>,
  parent: KubeObject
): { written: KubeObject[]; fresh: ChildPlan } {
  const fresh = planChildren(new Map(), plan.desired, types, parent)
  return { written: writtenChildren(plan.desired, plan.children, fresh), fresh }
}

/** The plan as comment lines of the text output. */
export function planComments(plan: ChildPlan): string[] {
  const entries = [...plan.steps, ...plan.unchanged, ...plan.skipped]
  const lines = ['# Plan:']
  if (entries.length === 0) lines.push('#   nothing to do')
  for (const entry of entries) lines.push(`#   ${planLine(entry)}`)
  return lines
}

/** The plan as the JSON output prints it. */
export function planJson(plan: ChildPlan): JsonObject {
  const entry = (e: { type: string; key: string }): JsonObject => ({ type: e.type, key: e.key })
  return {
    create: plan.create.map((e) => ({ ...entry(e), object: e.object })),
    update: plan.update.map((e) => ({ ...entry(e), method: e.method, object: e.object })),
    recreate: plan.recreate.map((e) => ({ ...entry(e), method: e.method })),
    delete: plan.delete.map(entry),
    unchanged: plan.unchanged.map(entry),
    skipped: plan.skipped.map((e) => ({ ...entry(e), reason: e.reason })),
    failed: plan.failed.map((e) => ({ ...entry(e), error: messageOf(e.error) })),
  }
}
