/**
 * The DecoratorController spec (`metacontroller.k8s.io/v1alpha1`), parsed from JSON with the
 * CRD's defaults applied and every problem reported with the field that has it.
 *
 * @remarks
 * A DecoratorController attaches objects ("attachments") to existing objects of any type (its
 * "resources"), selected by labels and annotations. The building blocks it shares with the
 * CompositeController (resource rules, hooks, update methods, resync) are parsed by the same code,
 * so both kinds get the same defaults and error messages.
 *
 * As the CompositeController parser, this one also checks the selectors' semantics (operators
 * with or without values, key syntax), so that a bad selector is reported as a
 * {@link ControllerSpecError} on its field when the controller is created, not on first use.
 *
 * @module
 */
import type { AnnotationSelector } from '../core/annotation-selector.js'
import { compileAnnotationSelector } from '../core/annotation-selector.js'
import { compileLabelSelector } from '../core/label-selector.js'
import { ControllerSpecError } from './controller-spec-error.js'
import type { ChildRule, ControllerHooks, ResourceRule } from './controller-spec-fields.js'
import {
  checkSelector,
  parseChildRules,
  parseHooks,
  parseLabelSelector,
  parseResyncPeriodMs,
  parseSelectorParts,
  requiredHooks,
  resourceRule,
} from './controller-spec-fields.js'
import type { LabelSelectorSpec } from './hook-model.js'
import { field, optionalBoolean } from './spec-field-readers.js'

/**
 * An annotation selector: label-selector semantics over annotations, with free-text values.
 * The same type as the core `AnnotationSelector`, which compiles it.
 */
export type AnnotationSelectorSpec = AnnotationSelector

/** A target rule of a DecoratorController: which objects of which type it decorates. */
export interface DecoratorResourceRule extends ResourceRule {
  /** Absent: every object (after the annotation selector). */
  readonly labelSelector?: LabelSelectorSpec | undefined
  /** Absent: every object (after the label selector). */
  readonly annotationSelector?: AnnotationSelectorSpec | undefined
  readonly ignoreStatusChanges: boolean
}

/** A parsed DecoratorController spec. */
export interface DecoratorControllerSpec {
  /**
   * The target rules, in spec order. The engine keys selectors by group + kind, so when two rules
   * name the same group and kind the later one wins there; the list itself keeps both.
   */
  readonly resources: readonly DecoratorResourceRule[]
  /** The attachment rules; the method defaults to OnDelete. */
  readonly attachments: readonly ChildRule[]
  readonly hooks: ControllerHooks
  readonly resyncPeriodMs: number | undefined
}

/** The annotation that marks an attachment with the name of the DecoratorController that owns it. */
export const DECORATOR_CONTROLLER_ANNOTATION = 'metacontroller.k8s.io/decorator-controller'

/** Returns the finalizer a DecoratorController puts on its targets when it has a finalize hook. */
export function decoratorFinalizer(name: string): string {
  return `metacontroller.io/decoratorcontroller-${name}`
}

/**
 * Parses `spec` of a DecoratorController.
 *
 * @throws {@link ControllerSpecError} naming the field and what is wrong with it.
 */
export function parseDecoratorControllerSpec(spec: unknown): DecoratorControllerSpec {
  const root = field(spec, 'spec')
  const resources = parseResourceRules(root['resources'], 'spec.resources')
  const attachments = parseChildRules(root['attachments'], 'spec.attachments')
  const hooks = requiredHooks(root, 'spec')
  const resyncPeriodMs = parseResyncPeriodMs(root, 'spec')
  return { resources, attachments, hooks: parseHooks(hooks, 'spec.hooks', root), resyncPeriodMs }
}

function parseResourceRules(value: unknown, path: string): DecoratorResourceRule[] {
  if (value === undefined || value === null) {
    throw new ControllerSpecError(path, 'is required and must list at least one resource')
  }
  if (!Array.isArray(value)) throw new ControllerSpecError(path, 'must be a list')
  // Upstream would start a controller that watches nothing; refusing it says why nothing happens.
  if (value.length === 0) throw new ControllerSpecError(path, 'must list at least one resource')
  return value.map((raw: unknown, i) => parseResourceRule(raw, `${path}[${i}]`))
}

function parseResourceRule(raw: unknown, path: string): DecoratorResourceRule {
  const rule = resourceRule(raw, path)
  const object = field(raw, path)
  const labelSelector = parseLabelSelector(object['labelSelector'], `${path}.labelSelector`)
  checkSelector(() => compileLabelSelector(labelSelector), `${path}.labelSelector`)
  const annotationSelector = parseAnnotationSelector(
    object['annotationSelector'],
    `${path}.annotationSelector`
  )
  checkSelector(() => compileAnnotationSelector(annotationSelector), `${path}.annotationSelector`)
  return {
    ...rule,
    labelSelector,
    annotationSelector,
    ignoreStatusChanges: optionalBoolean(object, 'ignoreStatusChanges', path),
  }
}

/** Parses an annotation selector object, checking its shape (not its semantics). */
function parseAnnotationSelector(value: unknown, path: string): AnnotationSelectorSpec | undefined {
  const parts = parseSelectorParts(value, path, 'matchAnnotations')
  if (parts === undefined) return undefined
  return {
    ...(parts.exact === undefined ? {} : { matchAnnotations: parts.exact }),
    ...(parts.matchExpressions === undefined ? {} : { matchExpressions: parts.matchExpressions }),
  }
}
