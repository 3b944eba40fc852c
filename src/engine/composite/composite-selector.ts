/**
 * The selector of a CompositeController's parent (spec §3.6): the one definition the engine and
 * `metactl render` share.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import { compileLabelSelector } from '../../core/label-selector.js'
import type { CompositeControllerSpec } from '../../api/composite-controller-spec.js'
import { parseLabelSelector } from '../../api/composite-controller-spec.js'
import type { LabelSelectorSpec } from '../../api/hook-model.js'
import { TerminalError } from '../../runtime/queue/reconcile-errors.js'
import { messageOf } from '../../core/message-of.js'

/** The label `generateSelector` injects and selects on. */
export const CONTROLLER_UID_LABEL = 'controller-uid'

/** A label matcher. */
export type LabelMatcher = (labels: Readonly<Record<string, string>>) => boolean

/** A parent's selector, compiled, with the labels its children get injected. */
export interface ParentSelector {
  readonly spec: LabelSelectorSpec
  readonly matches: LabelMatcher
  /** Labels added to desired children that lack them (`controller-uid` under generateSelector). */
  readonly injectLabels: Readonly<Record<string, string>>
}

function isEmptySelector(selector: LabelSelectorSpec | undefined): boolean {
  return (
    selector === undefined ||
    (Object.keys(selector.matchLabels ?? {}).length === 0 &&
      (selector.matchExpressions ?? []).length === 0)
  )
}

/**
 * Returns the parent's selector: generated from its UID under `generateSelector`, otherwise its
 * `spec.selector`, which must be a non-empty label selector (even with no child rules, as
 * upstream).
 *
 * @throws TerminalError when the selector is missing, empty or malformed: retrying cannot help,
 *   the parent has to change.
 */
export function compositeSelector(
  spec: CompositeControllerSpec,
  parent: KubeObject
): ParentSelector {
  if (spec.generateSelector) {
    const labels = { [CONTROLLER_UID_LABEL]: parent.metadata.uid ?? '' }
    const selector = { matchLabels: labels }
    return { spec: selector, matches: compileLabelSelector(selector), injectLabels: labels }
  }
  const parentSpec = parent['spec']
  let selector: LabelSelectorSpec | undefined
  let matches: LabelMatcher
  try {
    selector = parseLabelSelector(
      isJsonObject(parentSpec) ? parentSpec['selector'] : undefined,
      'spec.selector'
    )
    matches = compileLabelSelector(selector)
  } catch (error) {
    throw new TerminalError(`can't get label selector: ${messageOf(error)}`, { cause: error })
  }
  if (selector === undefined || isEmptySelector(selector)) {
    throw new TerminalError(
      '.spec.selector must have either matchLabels, matchExpressions, or both'
    )
  }
  return { spec: selector, matches, injectLabels: {} }
}
