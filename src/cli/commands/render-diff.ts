/**
 * `metactl render --diff`: for each child the engine writes or deletes, a unified diff of its
 * YAML between what is observed and what the engine leaves, like `kubectl diff`: only the
 * changed lines, with context.
 *
 * @module
 */
import { stringify } from 'yaml'
import type { KubeObject } from '../../core/kube-object.js'
import { LAST_APPLIED_ANNOTATION } from '../../engine/index.js'
import type { PlanEntry } from '../../engine/sync/written-plan.js'

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

/** Lines of context around each change, as `diff -u`. */
export const DIFF_CONTEXT_LINES = 3

/**
 * The changed lines of a {@link diffLines} diff with {@link DIFF_CONTEXT_LINES} of context, in
 * hunks headed `@@ -start,count +start,count @@` as `diff -u` heads them.
 */
export function diffHunks(diff: readonly string[], context: number = DIFF_CONTEXT_LINES): string[] {
  const changed = diff.map((line) => !line.startsWith('  '))
  const shown = diff.map((_, i) =>
    changed.slice(Math.max(0, i - context), i + context + 1).some(Boolean)
  )
  const out: string[] = []
  let before = 0
  let after = 0
  for (let i = 0; i < diff.length;) {
    if (!shown[i]) {
      if (!(diff[i] ?? '').startsWith('+ ')) before++
      if (!(diff[i] ?? '').startsWith('- ')) after++
      i++
      continue
    }
    let end = i
    while (end < diff.length && shown[end]) end++
    const hunk = diff.slice(i, end)
    const removed = hunk.filter((l) => !l.startsWith('+ ')).length
    const added = hunk.filter((l) => !l.startsWith('- ')).length
    out.push(`@@ -${before + 1},${removed} +${after + 1},${added} @@`, ...hunk)
    before += removed
    after += added
    i = end
  }
  return out
}

/**
 * The diff of every child the plan creates, updates, recreates or deletes: the changed lines of
 * its YAML between what was observed and what the engine writes (for a recreate: what the next
 * sync creates), with context.
 */
export function formatDiff(entries: readonly PlanEntry[]): string[] {
  const changes = entries.filter((e) => ['create', 'update', 'recreate', 'delete'].includes(e.op))
  if (changes.length === 0) return ['# No changes: every desired child is as observed.']
  return changes.flatMap((e) => {
    const what = `${e.type} ${e.key}`
    const after = e.op === 'delete' ? undefined : e.written
    return [
      `--- ${e.observed === undefined ? '/dev/null' : `observed ${what}`}`,
      `+++ ${after === undefined ? '/dev/null' : `written ${what}`} (${e.op})`,
      ...diffHunks(diffLines(forDiff(e.observed), forDiff(after))),
    ]
  })
}
