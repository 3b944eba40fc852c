/**
 * The plan `metactl render` prints, read from what the engine's pipeline did: a child is shown as
 * created, updated, recreated or deleted when the engine wrote it so, and as unchanged or skipped
 * when the engine managed the children and left it alone. The engine's own plan only names the
 * update method, the skip reason and the observed object of each.
 *
 * @module
 */
import type { JsonObject, KubeObject } from '../../core/kube-object.js'
import type { ChildType, PlannedStep } from '../../engine/children/plan-children.js'
import type { SyncPlan } from '../../engine/sync/plan-sync.js'
import { writeKey } from '../../engine/sync/write-recorder.js'
import type { RecordedWrite, WriteMethod } from '../../engine/sync/write-recorder.js'
import { messageOf } from './render-inputs.js'

/** One entry of the printed plan. */
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

/** What the plan of a render is read from. */
export interface RenderedWrites {
  readonly plan: SyncPlan
  /** The child types of the plan, to find their writes. */
  readonly types: ReadonlyMap<string, ChildType>
  readonly writes: readonly RecordedWrite[]
  /** The creates of the next sync. */
  readonly next: readonly RecordedWrite[]
  readonly failure?: unknown
}

/** The printed plan, and whether the engine managed the children at all. */
export interface PrintedPlan {
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

/** Reads the printed plan from the engine's plan and the writes it made. */
export function printedPlan(rendered: RenderedWrites): PrintedPlan {
  const { plan, types } = rendered
  const writes = byKey(rendered.writes)
  const next = byKey(rendered.next)
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

/**
 * Every desired child as the engine leaves it in the cluster (with the last-applied annotation
 * and the controller reference it writes), in the answer's order, so that the output fed back as
 * `--observed` plans nothing; a child it did not write is shown as desired.
 */
export function writtenChildren(plan: SyncPlan, printed: PrintedPlan): KubeObject[] {
  const written = new Map<string, KubeObject>()
  for (const entry of printed.entries)
    if (entry.written !== undefined) written.set(`${entry.type} ${entry.key}`, entry.written)
  const out: KubeObject[] = []
  for (const [type, children] of plan.desired) {
    for (const [key, child] of children) out.push(written.get(`${type} ${key}`) ?? child)
  }
  return out
}

/** One line of the plan, as the text output prints it. */
export function planLine(entry: PlanEntry): string {
  const what = `${entry.type} ${entry.key}`
  switch (entry.op) {
    case 'update':
    case 'recreate':
      return `${entry.op.padEnd(10)} ${what} (${entry.method ?? ''})`
    case 'skip':
      return `${'skip'.padEnd(10)} ${what} (${entry.reason === 'Deleting' ? 'being deleted' : (entry.reason ?? '')})`
    case 'fail':
      return `${'error'.padEnd(10)} ${what}: ${messageOf(entry.error)}`
    case 'create':
    case 'delete':
    case 'unchanged':
      return `${entry.op.padEnd(10)} ${what}`
    default: {
      const unreachable: never = entry.op
      return String(unreachable)
    }
  }
}

/** The plan as comment lines of the text output. */
export function planComments(printed: PrintedPlan): string[] {
  const lines = ['# Plan:']
  if (!printed.managed)
    lines.push('#   nothing: the parent is released, the garbage collector deletes its children')
  else if (printed.entries.length === 0) lines.push('#   nothing to do')
  for (const entry of printed.entries) lines.push(`#   ${planLine(entry)}`)
  return lines
}

/** The plan as the JSON output prints it. */
export function planJson(printed: PrintedPlan): JsonObject {
  const of = (op: PlanEntry['op']): PlanEntry[] => printed.entries.filter((e) => e.op === op)
  const entry = (e: PlanEntry): JsonObject => ({ type: e.type, key: e.key })
  return {
    create: of('create').map((e) => ({ ...entry(e), object: e.written ?? null })),
    update: of('update').map((e) => ({
      ...entry(e),
      method: e.method ?? '',
      object: e.written ?? null,
    })),
    recreate: of('recreate').map((e) => ({ ...entry(e), method: e.method ?? '' })),
    delete: of('delete').map(entry),
    unchanged: of('unchanged').map(entry),
    skipped: of('skip').map((e) => ({ ...entry(e), reason: e.reason ?? '' })),
    failed: of('fail').map((e) => ({ ...entry(e), error: messageOf(e.error) })),
  }
}
