/**
 * The resources of a controller's rules as an offline sync takes them, without discovery: each
 * rule resolved to a kind (from an observed object, a CRD, a well-known kind or a guess the
 * hook's answer corrects) and a scope.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import { isJsonObject } from '../core/kube-object.js'
import { objectKey } from '../core/object-key.js'
import type { ChildRule } from '../api/composite-controller-spec.js'
import { gvkKey } from '../api/hook-model.js'
import { isClusterScoped, isResourceOf } from '../api/resource-names.js'
import type { ResourceInfo } from '../kube/resource-map.js'
import { kindScope } from '../sdk/resource-scope.js'

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

/** `Kind key (apiVersion)`, for messages. */
export function describeObject(object: KubeObject): string {
  return `${object.kind} ${objectKey(object) || '(no name)'} (${object.apiVersion})`
}

/** `field[index] (apiVersion resource)`, for messages. */
export function describeRule(rule: ResolvedRule): string {
  return `${rule.field}[${rule.index}] (${rule.rule.apiVersion} ${rule.rule.resource})`
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
 * The resource of the parent (a decorator's target): its scope by the engine's rules
 * (`kindScope`: its `--crd`, else the built-in kinds' table), else namespaced when the sample has
 * a namespace.
 */
export function parentResourceOf(
  resource: string,
  parent: KubeObject,
  crds: readonly KubeObject[]
): ResourceInfo {
  const info = offlineResource(parent.apiVersion, resource, parent.kind)
  const scope = kindScope(parent.apiVersion, parent.kind, crds, resource)
  const namespaced = scope.namespaced ?? (parent.metadata.namespace ?? '') !== ''
  return { ...info, ref: { ...info.ref, namespaced } }
}

/** What an offline sync starts from: the parent, CRDs, resolved rules and observed objects. */
export interface OfflineInputs {
  readonly parent: KubeObject
  readonly crds: readonly KubeObject[]
  readonly rules: ResolvedRule[]
  /** The observed objects of each rule. */
  readonly byRule: Map<ResolvedRule, KubeObject[]>
  /** The observed objects held back from the rules (ControllerRevisions). */
  readonly held: KubeObject[]
  /** The objects a customize hook selects its related objects from (`--related`). */
  readonly related: readonly KubeObject[]
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
