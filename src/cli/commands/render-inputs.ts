/**
 * The inputs of `metactl render`: the manifests its flags name, and the resources their rules
 * stand for, without discovery.
 *
 * @remarks
 * An object belongs to the rule with its apiVersion whose resource is the lowercase plural of its
 * kind. A rule no observed object names gets a well-known kind, or one guessed from its resource
 * and corrected from the hook's answer (see `api/resource-names.ts` for plurals and scopes).
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import type { KubeObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import { objectKey } from '../../core/object-key.js'
import { controllerRefOf, groupOf } from '../../core/owner-references.js'
import type { ChildRule } from '../../api/composite-controller-spec.js'
import { gvkKey } from '../../api/hook-model.js'
import { isClusterScoped, isResourceOf, kindOf } from '../../api/resource-names.js'
import type { ResourceInfo } from '../../kube/resource-map.js'
import { parseManifests } from '../../cluster/install-crds.js'
import { crdVersionSchema } from '../../sdk/crd-schema.js'
import { validateAgainstSchema } from '../../sdk/schema-validation.js'
import { CliError } from '../cli-error.js'

/** The UID `metactl render` gives a parent that has none and whose children name none. */
export const RENDER_PARENT_UID = '00000000-0000-0000-0000-render0000000'

/** The options of `metactl render`. */
export interface RenderOptions {
  controller: string
  parent: string
  observed?: string[]
  crd?: string[]
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
  /** Where the kind came from; a guessed kind may be corrected by the hook's answer. */
  source: 'observed' | 'crd' | 'well-known' | 'guessed' | 'desired'
  /** The scope a `--crd` gives; else well-known kinds' scope, and namespaced for the rest. */
  namespaced?: boolean
}

/** The message of an error, or the value as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** `Kind key (apiVersion)`, for messages. */
export function describeObject(object: KubeObject): string {
  return `${object.kind} ${objectKey(object) || '(no name)'} (${object.apiVersion})`
}

/** A `List` (`kubectl get -o yaml`) stands for its items. */
function withoutLists(objects: readonly KubeObject[], origin: string): KubeObject[] {
  return objects.flatMap((object) => {
    if (!object.kind.endsWith('List') || !Array.isArray(object['items'])) return [object]
    const items: unknown[] = object['items']
    return items.map((item, index) => {
      if (
        !isJsonObject(item) ||
        typeof item['kind'] !== 'string' ||
        !isJsonObject(item['metadata'])
      )
        throw new CliError(
          `${origin}: item ${index} of the ${object.kind} is not a Kubernetes object`
        )
      // `kubectl get -o yaml` leaves out the kind's apiVersion only on the list itself.
      return item as KubeObject
    })
  })
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
    return withoutLists(parseManifests(text, `${flag} ${path}`), `${flag} ${path}`)
  } catch (error) {
    throw new CliError(messageOf(error))
  }
}

/**
 * The UID a parent without one gets: that of the controller reference its observed children
 * carry for it (same group, kind and name), so that they are claimed as in the cluster they came
 * from; else {@link RENDER_PARENT_UID}, so that generated selectors, and the output, are stable.
 */
function parentUid(parent: KubeObject, observed: readonly KubeObject[]): string {
  for (const child of observed) {
    const ref = controllerRefOf(child)
    if (
      ref?.kind === parent.kind &&
      ref.name === parent.metadata.name &&
      groupOf(ref.apiVersion) === groupOf(parent.apiVersion)
    )
      return ref.uid
  }
  return RENDER_PARENT_UID
}

/**
 * Reads the one object a `--parent` file holds and checks it is of one of the rules' resources;
 * a parent without a UID gets one (see {@link parentUid}).
 */
function readParentObject(
  path: string,
  rules: readonly { readonly apiVersion: string; readonly resource: string }[],
  observed: readonly KubeObject[],
  warn: (line: string) => void
): KubeObject {
  const objects = readObjects('--parent', path)
  const [first] = objects
  if (first === undefined || objects.length > 1) {
    throw new CliError(`--parent ${path}: expected one object, found ${objects.length}`)
  }
  const parent = structuredClone(first)
  if ((parent.metadata.name ?? '') === '')
    throw new CliError(`--parent ${path}: the ${parent.kind} has no metadata.name`)
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
    parent.metadata.uid = parentUid(parent, observed)
  }
  return parent
}

/** The GVK key of a resolved rule, e.g. `Pod.v1`. */
export function typeOf(rule: ResolvedRule): string {
  return gvkKey(rule.rule.apiVersion, rule.kind)
}

/** What discovery would say of a resource: its kind, scope and a status subresource. */
export function offlineResource(apiVersion: string, resource: string, kind: string): ResourceInfo {
  const slash = apiVersion.indexOf('/')
  const group = slash === -1 ? '' : apiVersion.slice(0, slash)
  const version = slash === -1 ? apiVersion : apiVersion.slice(slash + 1)
  return {
    ref: { group, version, resource, namespaced: !isClusterScoped(apiVersion, kind) },
    apiVersion,
    kind,
    responseKind: undefined,
    singularName: '',
    verbs: [],
    shortNames: [],
    categories: [],
    subresources: ['status'],
  }
}

/** The resource of a resolved rule. */
export function resourceOf(rule: ResolvedRule): ResourceInfo {
  const info = offlineResource(rule.rule.apiVersion, rule.rule.resource, rule.kind)
  const { namespaced } = rule
  return namespaced === undefined ? info : { ...info, ref: { ...info.ref, namespaced } }
}

/**
 * The resource of the parent (a decorator's target): namespaced as its `--crd` says, else when
 * the sample has a namespace.
 */
export function parentResourceOf(
  resource: string,
  parent: KubeObject,
  crds: readonly KubeObject[]
): ResourceInfo {
  const info = offlineResource(parent.apiVersion, resource, parent.kind)
  const group = info.ref.group
  const crd = crds.map(crdNames).find((n) => n?.group === group && n.plural === resource)
  const namespaced = crd?.namespaced ?? (parent.metadata.namespace ?? '') !== ''
  return { ...info, ref: { ...info.ref, namespaced } }
}

/** What a CustomResourceDefinition says of its resource. */
interface CrdNames {
  readonly group: string
  readonly plural: string
  readonly kind: string
  readonly namespaced: boolean
}

function crdNames(crd: KubeObject): CrdNames | undefined {
  const spec = crd['spec']
  if (!isJsonObject(spec) || !isJsonObject(spec['names'])) return undefined
  const { group, scope } = spec
  const { plural, kind } = spec['names']
  if (typeof group !== 'string' || typeof plural !== 'string' || typeof kind !== 'string')
    return undefined
  return { group, plural, kind, namespaced: scope !== 'Cluster' }
}

/**
 * Checks the parent against its CRD's schema, when one is given, as the API server would on
 * create; a violation is an error worded as the API server's (`Kind.group "name" is invalid:
 * field: reason`).
 */
function checkParentSchema(parent: KubeObject, crds: readonly KubeObject[]): void {
  const group = groupOf(parent.apiVersion)
  const crd = crds.find((c) => {
    const names = crdNames(c)
    return names?.group === group && names.kind === parent.kind
  })
  // CRDs given only for children leave the parent unchecked.
  if (crd === undefined) return
  const version = parent.apiVersion.slice(group.length + 1)
  let violations
  try {
    violations = validateAgainstSchema(parent, crdVersionSchema(crd, version).schema)
  } catch (error) {
    throw new CliError(`--crd: ${messageOf(error)}`)
  }
  if (violations.length === 0) return
  const causes = violations.map((v) => `${v.path}: ${v.message}`)
  const list = causes.length === 1 ? (causes[0] ?? '') : `[${causes.join(', ')}]`
  throw new CliError(
    `--parent: ${parent.kind}.${group} "${parent.metadata.name ?? ''}" is invalid: ${list}`
  )
}

function describeRule(rule: ResolvedRule): string {
  return `${rule.field}[${rule.index}] (${rule.rule.apiVersion} ${rule.rule.resource})`
}

/** The rule an observed object belongs to; the rule takes the object's kind. */
function ruleOfObserved(
  rules: readonly ResolvedRule[],
  object: KubeObject,
  file: string
): ResolvedRule {
  const rule = rules.find(
    (r) => r.rule.apiVersion === object.apiVersion && isResourceOf(object.kind, r.rule.resource)
  )
  if (rule === undefined) {
    const declared = rules.map((r) => `${r.rule.apiVersion} ${r.rule.resource}`).join(', ')
    throw new CliError(
      `--observed ${file}: ${describeObject(object)} matches no ${rules[0]?.field ?? 'child'} rule ` +
        `(declared: ${declared || 'none'}); a kind matches the rule whose resource is its ` +
        'lowercase plural'
    )
  }
  if (rule.source === 'observed' && rule.kind !== object.kind) {
    throw new CliError(
      `--observed ${file}: ${describeObject(object)} and ${rule.kind} objects both match ${describeRule(rule)}`
    )
  }
  rule.kind = object.kind
  rule.source = 'observed'
  return rule
}

/**
 * Resolves every rule's kind and sorts the observed objects into them; an observed object of a
 * namespaced rule without a namespace gets the parent's.
 */
function resolveRules(
  declared: readonly ResolvedRule['rule'][],
  field: RuleField,
  parent: KubeObject,
  observed: readonly { readonly object: KubeObject; readonly file: string }[],
  crds: readonly KubeObject[] = []
): { rules: ResolvedRule[]; byRule: Map<ResolvedRule, KubeObject[]> } {
  const rules: ResolvedRule[] = declared.map((rule, index) => ({
    rule,
    field,
    index,
    kind: '',
    source: 'guessed',
  }))
  for (const rule of rules) {
    const names = crds
      .map(crdNames)
      .find((n) => n?.group === groupOf(rule.rule.apiVersion) && n.plural === rule.rule.resource)
    if (names === undefined) continue
    Object.assign(rule, { kind: names.kind, source: 'crd', namespaced: names.namespaced })
  }
  const byRule = new Map(rules.map((rule) => [rule, [] as KubeObject[]]))
  const seen = new Set<string>()
  for (const { object, file } of observed) {
    if ((object.metadata.name ?? '') === '')
      throw new CliError(`--observed ${file}: a ${object.kind} has no metadata.name`)
    const rule = ruleOfObserved(rules, object, file)
    const child = structuredClone(object)
    if (resourceOf(rule).ref.namespaced && (child.metadata.namespace ?? '') === '') {
      const namespace = parent.metadata.namespace
      if (namespace !== undefined && namespace !== '') child.metadata.namespace = namespace
    }
    if (resourceOf(rule).ref.namespaced && (child.metadata.namespace ?? '') === '')
      throw new CliError(
        `--observed ${file}: ${describeObject(child)} has no namespace, and the parent none to give`
      )
    const key = `${typeOf(rule)} ${objectKey(child)}`
    if (seen.has(key))
      throw new CliError(`--observed ${file}: ${describeObject(child)} appears twice`)
    seen.add(key)
    byRule.get(rule)?.push(child)
  }
  for (const rule of rules) {
    if (rule.source === 'observed' || rule.source === 'crd') continue
    const { kind, guessed } = kindOf(rule.rule.apiVersion, rule.rule.resource)
    rule.kind = kind
    rule.source = guessed ? 'guessed' : 'well-known'
  }
  return { rules, byRule }
}

/** What both kinds read from the flags. */
export interface RenderInputs {
  readonly parent: KubeObject
  readonly crds: readonly KubeObject[]
  readonly rules: ResolvedRule[]
  /** The observed objects of each rule. */
  readonly byRule: Map<ResolvedRule, KubeObject[]>
  /** The observed objects held back from the rules (ControllerRevisions). */
  readonly held: KubeObject[]
}

/**
 * Reads the `--parent`, `--crd` and `--observed` files: the parent checked against its CRD, the
 * rules resolved and the observed objects sorted into them, except those `hold` keeps apart.
 */
export function readInputs(
  opts: RenderOptions,
  parentRules: readonly { readonly apiVersion: string; readonly resource: string }[],
  declared: readonly ResolvedRule['rule'][],
  field: RuleField,
  warn: (line: string) => void,
  hold: (object: KubeObject) => boolean = () => false
): RenderInputs {
  const files = (opts.observed ?? []).flatMap((file) =>
    readObjects('--observed', file).map((object) => ({ object, file }))
  )
  const objects = files.map((f) => f.object)
  const parent = readParentObject(opts.parent, parentRules, objects, warn)
  const crds = (opts.crd ?? []).flatMap((path) =>
    readObjects('--crd', path).filter((o) => o.kind === 'CustomResourceDefinition')
  )
  checkParentSchema(parent, crds)
  const observed = files.filter((f) => !hold(f.object))
  const resolved = resolveRules(declared, field, parent, observed, crds)
  return { parent, crds, ...resolved, held: objects.filter(hold) }
}

/** Corrects guessed kinds from the hook's answer, whose objects name their kinds. */
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
