/**
 * The plan of one sync as its writes carried it out: the engine's plan ({@link SyncPlan}) names
 * each child's step, its update method and what was observed; the `WriteRecorder`'s record
 * says which steps were written. `metactl render` prints it, and `metactl dev` can report a sync
 * from it.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { ChildType, PlannedStep } from '../children/plan-children.js'
import type { SyncPlan } from './plan-sync.js'
import { writeKey } from './write-recorder.js'
import type { RecordedWrite, WriteMethod } from './write-recorder.js'

/** One child of a plan, as the writes carried it out. */
export interface PlanEntry {
  readonly op: 'create' | 'update' | 'recreate' | 'delete' | 'unchanged' | 'skip' | 'fail'
  readonly type: string
  readonly key: string
  readonly method?: string
  readonly reason?: string
  readonly error?: unknown
  /** The object observed before the sync. */
  readonly observed?: KubeObject
  /** The object the engine wrote (for a recreate: the one the next sync creates). */
  readonly written?: KubeObject
}

/** What {@link writtenPlan} reads: the engine's plan of one sync and the writes it made. */
export interface PlanWrites {
  readonly plan: SyncPlan
  /** The child types of the plan, to find their writes. */
  readonly types: ReadonlyMap<string, ChildType>
  /** The writes of the sync's apply step. */
  readonly writes: readonly RecordedWrite[]
  /** The creates of the next sync (which creates what a recreate deleted); none when absent. */
  readonly next?: readonly RecordedWrite[]
  /** What managing the children failed with, when it did (the plan's failures then count). */
  readonly failure?: unknown
}

/** The plan as carried out, and whether the engine managed the children at all. */
export interface WrittenPlan {
  readonly entries: readonly PlanEntry[]
  /** False when the engine left the children alone (a released, deleting parent). */
  readonly managed: boolean
}

function keyOfStep(types: ReadonlyMap<string, ChildType>, step: PlannedStep): string | undefined {
  const ref = types.get(step.type)?.ref
  // keyOf(undefined, key) is the key itself: `namespace/name` or `name`.
  return ref === undefined ? undefined : writeKey({ ref, namespace: undefined, name: step.key })
}

function byKey(writes: readonly RecordedWrite[]): Map<string, RecordedWrite> {
  const map = new Map<string, RecordedWrite>()
  for (const write of writes)
    if (write.error === undefined) map.set(`${write.method} ${writeKey(write)}`, write)
  return map
}

/** The entry of one planned step, when the engine carried it out. */
function stepEntry(
  step: PlannedStep,
  find: (method: WriteMethod) => RecordedWrite | undefined,
  failed: boolean
): PlanEntry | undefined {
  const { type, key } = step
  switch (step.op) {
    case 'create':
    case 'update': {
      const sent = find(step.op)?.sent
      if (sent === undefined) return undefined
      const method = step.op === 'update' ? { method: step.method, observed: step.observed } : {}
      return { op: step.op, type, key, ...method, written: sent }
    }
    case 'recreate':
    case 'delete': {
      if (find('delete') === undefined) return undefined
      const next = step.op === 'recreate' ? find('create')?.sent : undefined
      return {
        op: step.op,
        type,
        key,
        ...(step.op === 'recreate' ? { method: step.method } : {}),
        observed: step.object,
        ...(next === undefined ? {} : { written: next }),
      }
    }
    case 'fail':
      return failed ? { op: 'fail', type, key, error: step.error } : undefined
    default: {
      const unreachable: never = step
      return unreachable
    }
  }
}

/**
 * Reads which steps of the engine's plan its writes carried out: a child is created, updated,
 * recreated or deleted when a successful write of that method reached it, failed when managing
 * the children failed, and unchanged or skipped when the engine managed the children at all.
 * Writes before the apply step (claims, the finalizer) are not passed in, so adoption is no
 * change.
 */
export function writtenPlan(rendered: PlanWrites): WrittenPlan {
  const { plan, types } = rendered
  const writes = byKey(rendered.writes)
  const next = byKey(rendered.next ?? [])
  const entries: PlanEntry[] = []
  for (const step of plan.children.steps) {
    const key = keyOfStep(types, step)
    const find = (method: WriteMethod): RecordedWrite | undefined =>
      key === undefined
        ? undefined
        : method === 'create' && step.op === 'recreate'
          ? next.get(`create ${key}`)
          : writes.get(`${method} ${key}`)
    const entry = stepEntry(step, find, rendered.failure !== undefined)
    if (entry !== undefined) entries.push(entry)
  }
  const managed = entries.length > 0 || plan.children.steps.length === 0
  if (managed) {
    for (const { type, key, object } of plan.children.unchanged)
      entries.push({ op: 'unchanged', type, key, observed: object, written: object })
    for (const { type, key, object, reason, desired } of plan.children.skipped)
      entries.push({
        op: 'skip',
        type,
        key,
        reason,
        observed: object,
        ...(desired ? { written: object } : {}),
      })
  }
  return { entries, managed }
}
