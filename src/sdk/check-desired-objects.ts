/**
 * The engine's checks on a hook's answer, for the SDK's test helpers: the desired children (or
 * attachments) go through the same `prepareDesiredChildren` the engine runs before it writes
 * anything, with the rules taken from the controller manifest when the test gives one.
 *
 * @remarks
 * Without discovery, a child's type is declared when a rule has its apiVersion and the lowercase
 * plural of its kind as resource (the rule `metactl render` uses, `src/api/resource-names.ts`),
 * and it is namespaced unless it is a well-known cluster-scoped kind. Without a manifest every
 * type counts as declared; namespaces, names, labels and duplicates are still checked.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import { isJsonObject } from '../core/kube-object.js'
import { compileLabelSelector } from '../core/label-selector.js'
import type { ChildRule } from '../api/composite-controller-spec.js'
import {
  parseCompositeControllerSpec,
  parseLabelSelector,
} from '../api/composite-controller-spec.js'
import {
  DECORATOR_CONTROLLER_ANNOTATION,
  parseDecoratorControllerSpec,
} from '../api/decorator-controller-spec.js'
import { InvalidDesiredChildError, prepareDesiredChildren } from '../api/desired-children.js'
import type { DesiredChildrenRules } from '../api/desired-children.js'
import { gvkKey } from '../api/hook-model.js'
import { isClusterScoped, isResourceOf, kindOf } from '../api/resource-names.js'

/** The label `generateSelector` injects and selects on (as the engine's). */
const CONTROLLER_UID_LABEL = 'controller-uid'

function typeRules(
  objects: readonly KubeObject[],
  rules: readonly ChildRule[] | undefined
): Pick<DesiredChildrenRules, 'declaredTypes' | 'namespaced'> {
  const declaredTypes = new Set<string>()
  const namespaced = new Map<string, boolean>()
  // The rules' own types first (well-known or guessed kinds), so that messages list them.
  for (const rule of rules ?? []) {
    const { kind } = kindOf(rule.apiVersion, rule.resource)
    const type = gvkKey(rule.apiVersion, kind)
    declaredTypes.add(type)
    namespaced.set(type, !isClusterScoped(rule.apiVersion, kind))
  }
  for (const object of objects) {
    const type = gvkKey(object.apiVersion, object.kind)
    namespaced.set(type, !isClusterScoped(object.apiVersion, object.kind))
    const declared =
      rules === undefined ||
      rules.some(
        (rule) => rule.apiVersion === object.apiVersion && isResourceOf(object.kind, rule.resource)
      )
    if (declared) declaredTypes.add(type)
  }
  return { declaredTypes, namespaced }
}

function parentSelector(
  generateSelector: boolean,
  parent: KubeObject
): Pick<DesiredChildrenRules, 'injectLabels' | 'matchesSelector'> {
  if (generateSelector) {
    const labels = { [CONTROLLER_UID_LABEL]: parent.metadata.uid ?? '' }
    return { injectLabels: labels, matchesSelector: compileLabelSelector({ matchLabels: labels }) }
  }
  const spec = parent['spec']
  const selector = parseLabelSelector(
    isJsonObject(spec) ? spec['selector'] : undefined,
    'spec.selector'
  )
  const empty =
    Object.keys(selector?.matchLabels ?? {}).length === 0 &&
    (selector?.matchExpressions ?? []).length === 0
  if (empty) {
    throw new InvalidDesiredChildError(
      'the parent has no spec.selector and the controller has no generateSelector: the engine ' +
        'refuses to sync it (.spec.selector must have either matchLabels, matchExpressions, or both)'
    )
  }
  return { injectLabels: {}, matchesSelector: compileLabelSelector(selector) }
}

/**
 * Runs the engine's checks on a composite hook's desired children.
 *
 * @param controller - The CompositeController manifest; without it, any type is accepted and no
 *   selector is enforced.
 * @throws InvalidDesiredChildError with the engine's message for the first wrong child.
 */
export function checkDesiredChildren(
  children: readonly KubeObject[],
  parent: KubeObject,
  controller: KubeObject | undefined
): void {
  const spec =
    controller === undefined ? undefined : parseCompositeControllerSpec(controller['spec'])
  prepareDesiredChildren(children, {
    parent,
    ...typeRules(children, spec?.childResources),
    ...(spec === undefined
      ? { injectLabels: {}, matchesSelector: () => true }
      : parentSelector(spec.generateSelector, parent)),
  })
}

/**
 * Runs the engine's checks on a decorator hook's desired attachments.
 *
 * @param controller - The DecoratorController manifest; without it, any type is accepted.
 * @throws InvalidDesiredChildError with the engine's message for the first wrong attachment.
 */
export function checkDesiredAttachments(
  attachments: readonly KubeObject[],
  target: KubeObject,
  controller: KubeObject | undefined
): void {
  const spec =
    controller === undefined ? undefined : parseDecoratorControllerSpec(controller['spec'])
  prepareDesiredChildren(attachments, {
    parent: target,
    ruleField: 'attachments',
    ...typeRules(attachments, spec?.attachments),
    injectLabels: {},
    injectAnnotations: { [DECORATOR_CONTROLLER_ANNOTATION]: controller?.metadata.name ?? 'test' },
    matchesSelector: () => true,
  })
}
