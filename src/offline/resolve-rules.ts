/**
 * Resolves a controller's rules offline: every rule gets a kind and scope, and the observed
 * objects given are sorted into the rules they belong to.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import { objectKey } from '../core/object-key.js'
import { groupOf } from '../core/owner-references.js'
import { isResourceOf, kindOf } from '../api/resource-names.js'
import { OfflineError } from './offline-error.js'
import { crdNames } from '../sdk/resource-scope.js'
import { describeObject, describeRule, resourceOf, typeOf } from './offline-resource.js'
import type { ResolvedRule, RuleField } from './offline-resource.js'

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
    throw new OfflineError(
      `--observed ${file}: ${describeObject(object)} matches no ${rules[0]?.field ?? 'child'} rule ` +
        `(declared: ${declared || 'none'}); a kind matches the rule whose resource is its ` +
        'lowercase plural'
    )
  }
  if (rule.source === 'observed' && rule.kind !== object.kind) {
    throw new OfflineError(
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
export function resolveRules(
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
      throw new OfflineError(`--observed ${file}: a ${object.kind} has no metadata.name`)
    const rule = ruleOfObserved(rules, object, file)
    const child = structuredClone(object)
    if (resourceOf(rule).ref.namespaced && (child.metadata.namespace ?? '') === '') {
      const namespace = parent.metadata.namespace
      if (namespace !== undefined && namespace !== '') child.metadata.namespace = namespace
    }
    if (resourceOf(rule).ref.namespaced && (child.metadata.namespace ?? '') === '')
      throw new OfflineError(
        `--observed ${file}: ${describeObject(child)} has no namespace, and the parent none to give`
      )
    const key = `${typeOf(rule)} ${objectKey(child)}`
    if (seen.has(key))
      throw new OfflineError(`--observed ${file}: ${describeObject(child)} appears twice`)
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
