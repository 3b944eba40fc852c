/**
 * One line per sync for `metactl dev`, from the engine's own report of it (`EngineOptions.onSync`):
 * the children it created, updated and deleted (the writes the API server accepted), the desired
 * ones it left unchanged, and whether it wrote the status; or why the hook's answer was rejected,
 * or why the sync failed. A line repeated for the same parent (retries, resyncs) is printed once,
 * then again with its count, `(x3)`, when something else happens or a second has passed.
 *
 * @module
 */
import { HookResponseError } from '../../api/hook-response-error.js'
import { InvalidDesiredChildError } from '../../api/desired-children.js'
import type { KubeObject } from '../../core/kube-object.js'
import { summarizeWrites, writeKey } from '../../engine/index.js'
import type { RecordedWrite, SyncReport } from '../../engine/index.js'
import { NotSyncedError, RetryAfterError } from '../../runtime/reconcile-errors.js'
import { describeHookError } from './hook-error.js'

/** How many names a group of children shows before `+N more`. */
const NAMES_SHOWN = 4

/** A parent's `namespace/name`, or its name when cluster-scoped. */
function keyOf(namespace: string | undefined, name: string): string {
  return namespace === undefined || namespace === '' ? name : `${namespace}/${name}`
}

/** What a line says about a parent: `[controller] sync Kind ns/name`. */
function subjectOf(report: SyncReport): string {
  const { metadata, kind } = report.parent
  const parent = keyOf(metadata.namespace, metadata.name ?? '')
  return `[${report.controller.name}] ${report.hook ?? 'sync'} ${kind} ${parent}`
}

/** A child as a line names it: `ConfigMap web`, with its namespace when not the parent's. */
function childName(parent: KubeObject, kind: string, namespace: string | undefined, name: string) {
  const shown = namespace === parent.metadata.namespace ? name : keyOf(namespace, name)
  return `${kind} ${shown}`
}

/** The kind of a deleted child: the plan names it; without a plan, the resource does. */
function deletedKind(report: SyncReport, write: RecordedWrite): string {
  const planned = [
    ...(report.plan?.children.delete ?? []),
    ...(report.plan?.children.recreate ?? []),
  ]
  const match = planned.find(
    (entry) =>
      entry.object.metadata.name === write.name &&
      entry.object.metadata.namespace === write.namespace
  )
  return match?.object.kind ?? write.ref.resource
}

/** `created 2 (ConfigMap a, ConfigMap b)`, or `deleted 0`. */
function group(verb: string, names: readonly string[]): string {
  if (names.length === 0) return `${verb} 0`
  const shown = names.slice(0, NAMES_SHOWN).join(', ')
  const more = names.length > NAMES_SHOWN ? `, +${names.length - NAMES_SHOWN} more` : ''
  return `${verb} ${names.length} (${shown}${more})`
}

/**
 * The children's part of a line, and what was written to the parent and revisions: the writes
 * summed up as `metactl render` sums them ({@link summarizeWrites}), each child named by its kind.
 */
export function describeWrites(report: SyncReport): string {
  const { parent, parentRef } = report
  const revisions = report.writes.filter((w) => w.ref.resource === 'controllerrevisions')
  const summary = summarizeWrites(
    report.writes.filter((w) => !revisions.includes(w)),
    {
      ref: parentRef,
      namespace: parentRef.namespaced ? parent.metadata.namespace : undefined,
      name: parent.metadata.name ?? '',
    }
  )
  const names = new Map<string, string>()
  for (const write of report.writes) {
    const kind = write.sent?.kind ?? deletedKind(report, write)
    names.set(writeKey(write), childName(parent, kind, write.namespace, write.name))
  }
  const shown = (keys: readonly string[]): string[] => [
    ...new Set(keys.map((key) => names.get(key) ?? key)),
  ]
  const created = shown(summary.created)
  const updated = shown(summary.updated).filter((name) => !created.includes(name))
  const deleted = shown(summary.deleted)
  const refused = shown(summary.failed.map((f) => f.key))
  const touched = new Set([...created, ...updated, ...deleted, ...refused])
  const unchanged = [...(report.plan?.desired.values() ?? [])]
    .flatMap((byKey) => [...byKey.values()])
    .map((o) => childName(parent, o.kind, o.metadata.namespace, o.metadata.name ?? ''))
    .filter((name) => !touched.has(name))
  const failed = summary.failed.map((f) => `${names.get(f.key) ?? f.key}: ${f.error}`)
  const role = report.controller.kind === 'DecoratorController' ? 'target' : 'parent'
  return [
    [
      group('created', created),
      group('updated', updated),
      group('deleted', deleted),
      ...(report.plan === undefined ? [] : [group('unchanged', unchanged)]),
      ...(failed.length === 0 ? [] : [group('refused', failed)]),
    ].join(', '),
    ...(summary.parentUpdated ? [`${role} updated`] : []),
    `status ${summary.statusWritten ? 'written' : 'unchanged'}`,
    ...(revisions.length > 0
      ? [`${revisions.length} revision write${revisions.length === 1 ? '' : 's'}`]
      : []),
  ].join('; ')
}

/** Whether an error is the engine refusing the hook's answer (nothing of it is written). */
export function isRejection(error: unknown): error is Error {
  return error instanceof InvalidDesiredChildError || error instanceof HookResponseError
}

/**
 * The lines of one sync: the first says what happened; a hook's exception adds its project-local
 * stack frames. Undefined for a sync that asked no hook and wrote nothing.
 */
export function describeSyncReport(report: SyncReport, projectDir: string): string[] | undefined {
  const subject = subjectOf(report)
  const { error } = report
  if (error === undefined) {
    if (report.hook === undefined && report.writes.length === 0) return undefined
    return [`${subject}: ${describeWrites(report)}`]
  }
  // A refused write wrote nothing either; it is named among the writes when there are others.
  const nothing = report.writes.every((w) => w.error !== undefined)
  const wrote = nothing ? 'nothing written' : `wrote ${describeWrites(report)}`
  if (error instanceof NotSyncedError || error instanceof RetryAfterError) {
    return [`${subject} waits: ${error.message}`]
  }
  if (isRejection(error)) {
    return [`${subject}: answer rejected, ${wrote}: ${error.message}`]
  }
  const [first = '', ...frames] = describeHookError(error, projectDir)
  const after = nothing ? '' : ` (${wrote})`
  return [`${subject} failed${after}: ${first}`, ...frames]
}

/** When a collapsed line is printed again with its count. */
export const COLLAPSE_AFTER_MS = 1000

/** A line's state: its text, how often it came in a row, how often that was printed. */
interface Repeats {
  readonly lines: readonly string[]
  count: number
  printed: number
  timer: (() => void) | undefined
}

/** Options of {@link SyncReporter}. */
export interface SyncReporterOptions {
  readonly now?: () => Date
  /** Runs `flush` after `delayMs`; returns what cancels it. */
  readonly schedule?: (flush: () => void, delayMs: number) => () => void
}

function scheduleTimer(flush: () => void, delayMs: number): () => void {
  const timer = setTimeout(flush, delayMs)
  timer.unref()
  return () => {
    clearTimeout(timer)
  }
}

/** Prints lines by subject, collapsing a line repeated for the same subject. */
export class SyncReporter {
  readonly #last = new Map<string, Repeats>()
  readonly #write: (line: string) => void
  readonly #now: () => Date
  readonly #schedule: NonNullable<SyncReporterOptions['schedule']>

  constructor(write: (line: string) => void, options: SyncReporterOptions = {}) {
    this.#write = write
    this.#now = options.now ?? (() => new Date())
    this.#schedule = options.schedule ?? scheduleTimer
  }

  /**
   * Prints `lines` about `subject`, or, when they repeat the last ones about it, counts them and
   * prints the first line again with its count later.
   */
  print(subject: string, lines: readonly string[]): void {
    const last = this.#last.get(subject)
    if (last?.lines.join('\n') === lines.join('\n')) {
      last.count++
      last.timer ??= this.#schedule(() => {
        last.timer = undefined
        this.#printCount(last)
      }, COLLAPSE_AFTER_MS)
      return
    }
    if (last !== undefined) this.#settle(last)
    this.#last.set(subject, { lines, count: 1, printed: 1, timer: undefined })
    this.#stamp(lines)
  }

  /** Prints the counts of every collapsed line not printed yet, e.g. before a reload's line. */
  flush(): void {
    for (const repeats of this.#last.values()) this.#settle(repeats)
  }

  #settle(repeats: Repeats): void {
    repeats.timer?.()
    repeats.timer = undefined
    this.#printCount(repeats)
  }

  #printCount(repeats: Repeats): void {
    if (repeats.count === repeats.printed) return
    repeats.printed = repeats.count
    this.#stamp([`${repeats.lines[0] ?? ''} (x${repeats.count})`])
  }

  #stamp(lines: readonly string[]): void {
    const time = this.#now().toISOString().slice(11, 19)
    const [first = '', ...rest] = lines
    this.#write(`${time} ${first}`)
    for (const line of rest) this.#write(`         ${line}`)
  }
}
