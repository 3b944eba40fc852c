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
import { compileLabelSelector } from '../core/label-selector.js'
import { ControllerSpecError } from './controller-spec-error.js'
import type { ChildRule, ControllerHooks, ResourceRule } from './controller-spec-fields.js'
import {
  checkSelector,
  parseChildRules,
  parseHooks,
  parseLabelSelector,
  parseResyncPeriodMs,
  requiredHooks,
  resourceRule,
} from './controller-spec-fields.js'
import type { LabelSelectorSpec } from './hook-model.js'
import { field, optionalBoolean, optionalObject } from './spec-field-readers.js'

// The shared building blocks used to live here; callers still import them from this module.
export { DEFAULT_WEBHOOK_TIMEOUT_MS, parseLabelSelector } from './controller-spec-fields.js'
export type {
  ChildRule,
  ControllerHooks,
  HookSpec,
  ResourceRule,
  StatusConditionCheck,
  UpdateMethod,
  WebhookSpec,
} from './controller-spec-fields.js'

/** The parent rule of a CompositeController. */
export interface ParentRule extends ResourceRule {
  readonly labelSelector: LabelSelectorSpec | undefined
  readonly ignoreStatusChanges: boolean
  readonly revisionFieldPaths: readonly string[]
}

/** A parsed CompositeController spec. */
export interface CompositeControllerSpec {
  readonly parentResource: ParentRule
  readonly childResources: readonly ChildRule[]
  readonly hooks: ControllerHooks
  readonly resyncPeriodMs: number | undefined
  readonly generateSelector: boolean
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
  const labelSelector = parseLabelSelector(
    parent['labelSelector'],
    'spec.parentResource.labelSelector'
  )
  // An invalid selector would otherwise fail the controller's start, which is retried forever.
  checkSelector(() => compileLabelSelector(labelSelector), 'spec.parentResource.labelSelector')
  const childResources = parseChildRules(root['childResources'], 'spec.childResources')
  const hooks = requiredHooks(root, 'spec')
  const resyncPeriodMs = parseResyncPeriodMs(root, 'spec')
  return {
    parentResource: {
      ...parentRule,
      labelSelector,
      ignoreStatusChanges: optionalBoolean(parent, 'ignoreStatusChanges', 'spec.parentResource'),
      revisionFieldPaths: (fieldPaths as string[] | undefined) ?? ['spec'],
    },
    childResources,
    hooks: parseHooks(hooks, 'spec.hooks', root),
    resyncPeriodMs,
    generateSelector: optionalBoolean(root, 'generateSelector', 'spec'),
  }
}
