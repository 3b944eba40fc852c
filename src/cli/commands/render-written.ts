/**
 * What `metactl render` prints for each desired child: the object as the engine would leave it in
 * the cluster (with the last-applied annotation and the controller reference it writes), so that
 * the output fed back as `--observed` plans nothing.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { PlanView as ChildPlan } from './render-plan-view.js'

function keyOf(step: { readonly type: string; readonly key: string }): string {
  return `${step.type} ${step.key}`
}

/**
 * The written form of every desired child, in the order given.
 *
 * @param desired - the desired children by type, then key, as planned
 * @param plan - the plan against the observed children
 * @param fresh - the plan against no observed children, whose creates give the objects the next
 *   sync writes after a recreate
 */
export function writtenChildren(
  desired: ReadonlyMap<string, ReadonlyMap<string, KubeObject>>,
  plan: ChildPlan,
  fresh: ChildPlan
): KubeObject[] {
  const written = new Map<string, KubeObject>()
  for (const step of fresh.create) written.set(keyOf(step), step.object)
  // What stays in the cluster this sync overrides what a fresh create would write.
  for (const step of plan.create) written.set(keyOf(step), step.object)
  for (const step of plan.update) written.set(keyOf(step), step.object)
  for (const step of plan.unchanged) written.set(keyOf(step), step.object)
  for (const step of plan.skipped) if (step.desired) written.set(keyOf(step), step.object)
  const out: KubeObject[] = []
  for (const [type, children] of desired) {
    for (const [key, child] of children) out.push(written.get(`${type} ${key}`) ?? child)
  }
  return out
}
