/**
 * The plan `metactl render` prints: the engine's plan as its writes carried it out
 * (`writtenPlan`), as comment lines or JSON.
 *
 * @module
 */
import type { JsonObject } from '../../core/kube-object.js'
import type { PlanEntry, WrittenPlan } from '../../engine/sync/written-plan.js'
import { messageOf } from '../../core/message-of.js'

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
export function planComments(printed: WrittenPlan): string[] {
  const lines = ['# Plan:']
  if (!printed.managed)
    lines.push('#   nothing: the parent is released, the garbage collector deletes its children')
  else if (printed.entries.length === 0) lines.push('#   nothing to do')
  for (const entry of printed.entries) lines.push(`#   ${planLine(entry)}`)
  return lines
}

/** The plan as the JSON output prints it. */
export function planJson(printed: WrittenPlan): JsonObject {
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
