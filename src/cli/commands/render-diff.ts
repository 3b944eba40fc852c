/**
 * `metactl render --diff`: for each child the plan would write or delete, a unified diff of its
 * YAML between what is observed and what the engine would leave, like `kubectl diff`.
 *
 * @module
 */
import { stringify } from 'yaml'
import type { KubeObject } from '../../core/kube-object.js'
import { LAST_APPLIED_ANNOTATION } from '../../engine/index.js'
import type { PlanView as ChildPlan } from './render-plan-view.js'

/** Fields the server owns or that only repeat the object; left out of the diff. */
function forDiff(object: KubeObject | undefined): string[] {
  if (object === undefined) return []
  const copy = structuredClone(object)
  const meta = copy.metadata
  for (const field of [
    'resourceVersion',
    'uid',
    'creationTimestamp',
    'generation',
    'managedFields',
  ])
    Reflect.deleteProperty(meta, field)
  if (meta.annotations !== undefined) {
    Reflect.deleteProperty(meta.annotations, LAST_APPLIED_ANNOTATION)
    if (Object.keys(meta.annotations).length === 0) Reflect.deleteProperty(meta, 'annotations')
  }
  return stringify(copy, { lineWidth: 0, aliasDuplicateObjects: false }).trimEnd().split('\n')
}

/** A line diff (longest common subsequence): `' '` kept, `'-'` removed, `'+'` added lines. */
export function diffLines(before: readonly string[], after: readonly string[]): string[] {
  const n = before.length
  const m = after.length
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0))
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      const row = lcs[i] ?? []
      row[j] =
        before[i] === after[j]
          ? (lcs[i + 1]?.[j + 1] ?? 0) + 1
          : Math.max(lcs[i + 1]?.[j] ?? 0, row[j + 1] ?? 0)
    }
  }
  const out: string[] = []
  let i = 0
  let j = 0
  while (i < n || j < m) {
    if (i < n && j < m && before[i] === after[j]) {
      out.push(`  ${before[i] ?? ''}`)
      i++
      j++
    } else if (i < n && (j === m || (lcs[i + 1]?.[j] ?? 0) >= (lcs[i]?.[j + 1] ?? 0))) {
      // Removed lines first, as diff and kubectl diff print them.
      out.push(`- ${before[i] ?? ''}`)
      i++
    } else {
      out.push(`+ ${after[j] ?? ''}`)
      j++
    }
  }
  return out
}

/**
 * The diff of every child the plan creates, updates, recreates or deletes; `fresh`, the plan
 * against no observed children, gives the object a recreate ends with.
 */
export function formatDiff(plan: ChildPlan, fresh: ChildPlan): string[] {
  const written = new Map(fresh.create.map((s) => [`${s.type} ${s.key}`, s.object]))
  const entries: { title: string; before?: KubeObject; after?: KubeObject }[] = [
    ...plan.create.map((s) => ({ title: `create ${s.type} ${s.key}`, after: s.object })),
    ...plan.update.map((s) => ({
      title: `update ${s.type} ${s.key}`,
      before: s.observed,
      after: s.object,
    })),
    ...plan.recreate.map((s) => ({
      title: `recreate ${s.type} ${s.key}`,
      before: s.object,
      ...(written.has(`${s.type} ${s.key}`) ? { after: written.get(`${s.type} ${s.key}`) } : {}),
    })),
    ...plan.delete.map((s) => ({ title: `delete ${s.type} ${s.key}`, before: s.object })),
  ]
  if (entries.length === 0) return ['# No changes: every desired child is as observed.']
  return entries.flatMap((e) => [
    `--- ${e.before === undefined ? '/dev/null' : `observed ${e.title.split(' ').slice(1).join(' ')}`}`,
    `+++ ${e.after === undefined ? '/dev/null' : `written ${e.title.split(' ').slice(1).join(' ')}`} (${e.title.split(' ')[0] ?? ''})`,
    ...diffLines(forDiff(e.before), forDiff(e.after)),
  ])
}
