/**
 * The pure heart of a sync, shared by both controller kinds and by `metactl render`: from the
 * parent, the observed children and the hook's answer to the checked desired children and the
 * plan that brings the observed ones there.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { ObjectsByType } from '../../api/hook-model.js'
import { prepareDesiredChildren } from '../../api/desired-children.js'
import type { DesiredChildren, DesiredChildrenRules } from '../../api/desired-children.js'
import { planChildren } from '../children/plan-children.js'
import type { ChildPlan, ChildType } from '../children/plan-children.js'

/** The rules a controller applies to the children (or attachments) a hook asks for. */
export interface SyncRules extends DesiredChildrenRules {
  /** The declared types by GVK key: where they are written and how they are updated. */
  readonly types: ReadonlyMap<string, ChildType>
}

/** What {@link planSync} decided. */
export interface SyncPlan {
  /** The checked and defaulted desired children, by GVK key and object key. */
  readonly desired: DesiredChildren
  /** The writes that bring the observed children to the desired ones, in upstream order. */
  readonly children: ChildPlan
}

/**
 * Checks and defaults the desired children, then plans the child writes.
 *
 * @remarks
 * Pure: nothing is written and no argument is changed. Every check of the hook's answer happens
 * here, before the sync writes anything, so a bad answer changes nothing.
 *
 * @throws `InvalidDesiredChildError` for the first desired child that breaks a rule.
 */
export function planSync(
  parent: KubeObject,
  observed: ObjectsByType,
  desiredChildren: readonly KubeObject[],
  rules: SyncRules
): SyncPlan {
  const desired = prepareDesiredChildren(desiredChildren, { ...rules, parent })
  return { desired, children: planChildren(observed, desired, rules.types, parent) }
}
