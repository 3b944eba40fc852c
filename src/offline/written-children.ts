/**
 * The desired children of an offline sync as the engine leaves them in the cluster.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import type { SyncPlan } from '../engine/sync/plan-sync.js'
import type { WrittenPlan } from '../engine/sync/written-plan.js'

/**
 * Every desired child as the engine leaves it in the cluster (with the last-applied annotation
 * and the controller reference it writes), in the answer's order, so that the output fed back as
 * `--observed` plans nothing; a child it did not write is shown as desired.
 */
export function writtenChildren(plan: SyncPlan, printed: WrittenPlan): KubeObject[] {
  const written = new Map<string, KubeObject>()
  for (const entry of printed.entries)
    if (entry.written !== undefined) written.set(`${entry.type} ${entry.key}`, entry.written)
  const out: KubeObject[] = []
  for (const [type, children] of plan.desired) {
    for (const [key, child] of children) out.push(written.get(`${type} ${key}`) ?? child)
  }
  return out
}
