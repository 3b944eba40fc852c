/**
 * One line per sync for `metactl dev`, from the engine's own report of it (`EngineOptions.onSync`):
 * the children it created, updated and deleted (the writes the API server accepted), the desired
 * ones it left unchanged, and whether it wrote the status; or why the hook's answer was rejected,
 * or why the sync failed; a finalize that let the parent go says so. A line repeated for the same
 * parent (retries, resyncs) is printed once, then again with its count, `(x3)`, before the next
 * other line or once a second has passed, so lines never come out of order.
 *
 * @module
 */
import { HookResponseError } from '../../api/hook-response-error.js'
import { InvalidDesiredChildError } from '../../api/desired-children.js'
import type { KubeObject } from '../../core/kube-object.js'
import { writeKey, writtenPlan } from '../../engine/index.js'
import type { PlanEntry, SyncReport } from '../../engine/index.js'
import { ForbiddenError, NotFoundError } from '../../kube/api-error.js'
import { NotSyncedError, RetryAfterError } from '../../runtime/queue/reconcile-errors.js'
import { describeHookError } from './hook-error.js'
import { keyOf } from '../../core/object-key.js'
import { messageOf } from '../../core/message-of.js'

/** How many names a group of children shows before `+N more`. */
const NAMES_SHOWN = 4

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

/** `created 2 (ConfigMap a, ConfigMap b)`, or `deleted 0`. */
function group(verb: string, names: readonly string[]): string {
  if (names.length === 0) return `${verb} 0`
  const shown = names.slice(0, NAMES_SHOWN).join(', ')
  const more = names.length > NAMES_SHOWN ? `, +${names.length - NAMES_SHOWN} more` : ''
  return `${verb} ${names.length} (${shown}${more})`
}

/** A plan entry's child as a line names it: its GVK key is `Kind.apiVersion`, its key `ns/name`. */
function entryName(parent: KubeObject, entry: PlanEntry): string {
  const kind = entry.type.slice(0, entry.type.indexOf('.'))
  const slash = entry.key.indexOf('/')
  const namespace = slash < 0 ? undefined : entry.key.slice(0, slash)
  return childName(parent, kind, namespace, entry.key.slice(slash + 1))
}

/** The groups of a line, by the op of each child in the plan as carried out. */
const GROUP_OF: Readonly<
  Record<PlanEntry['op'], 'created' | 'updated' | 'deleted' | 'unchanged' | 'failed'>
> = {
  create: 'created',
  update: 'updated',
  // A recreate deletes now; the next sync creates, and says so.
  recreate: 'deleted',
  delete: 'deleted',
  unchanged: 'unchanged',
  skip: 'unchanged',
  fail: 'failed',
}

/**
 * The children's part of a line: the plan as the apply step's writes carried it out
 * ({@link writtenPlan}, as `metactl render` prints it).
 */
function describeChildren(report: SyncReport): string {
  const { parent, plan } = report
  if (plan === undefined) return 'children untouched'
  const writes = report.writes.slice(report.applyFrom ?? report.writes.length)
  const written = writtenPlan({
    plan,
    types: report.types,
    writes,
    ...(report.error === undefined ? {} : { failure: report.error }),
  })
  if (!written.managed) {
    // The engine left the children alone (a deleting parent), or every planned write lost a
    // race with a cache that was behind (the next sync, woken by the change, catches up).
    const refused = writes.filter((w) => w.error !== undefined)
    if (refused.length === 0) return 'children left alone'
    const shown = refused.map((w) => `${w.method} ${writeKey(w)}: ${writeErrorMessage(w.error)}`)
    return `nothing written to the children, ${group('refused', shown)}`
  }
  const groups = { created: [], updated: [], deleted: [], unchanged: [], failed: [] } as Record<
    (typeof GROUP_OF)[PlanEntry['op']],
    string[]
  >
  for (const entry of written.entries) {
    const error = entry.error === undefined ? '' : `: ${writeErrorMessage(entry.error)}`
    groups[GROUP_OF[entry.op]].push(`${entryName(parent, entry)}${error}`)
  }
  const { failed, ...rest } = groups
  return [
    ...Object.entries(rest).map(([verb, names]) => group(verb, names)),
    ...(failed.length === 0 ? [] : [group('failed', failed)]),
  ].join(', ')
}

/** What the API server says when a binding would grant rights its writer does not hold. */
const RBAC_ESCALATION = 'attempting to grant RBAC permissions not currently held'

/**
 * A refused write's message, naming the right the engine lacks when the API server refused a
 * RoleBinding or ClusterRoleBinding child as an escalation (the rules it lists follow on the
 * next lines of its message, cut here).
 */
export function writeErrorMessage(error: unknown): string {
  const message = messageOf(error)
  if (!(error instanceof ForbiddenError) || !message.includes(RBAC_ESCALATION)) return message
  const first = message.split('\n')[0] ?? message
  return (
    `${first} (the engine's account may only bind a role whose rules it holds: grant it the ` +
    "verb bind on the Role or ClusterRole the binding's roleRef names, apiGroups " +
    'rbac.authorization.k8s.io, resources roles/clusterroles, or those rules themselves)'
  )
}

/** The write key of the sync's parent, to tell its own writes from its children's. */
function parentKeyOf(report: SyncReport): string {
  const { parent, parentRef } = report
  return writeKey({
    ref: parentRef,
    namespace: parentRef.namespaced ? parent.metadata.namespace : undefined,
    name: parent.metadata.name ?? '',
  })
}

/**
 * Whether a finalize completed: the engine removed its finalizer (an accepted update of the
 * parent) and the parent is gone, so a later write to it (the status) found nothing. That 404 is
 * the deletion the finalize let through, not a failure.
 */
export function finalizedAndGone(report: SyncReport): boolean {
  if (report.hook !== 'finalize') return false
  const parentKey = parentKeyOf(report)
  const toParent = report.writes.filter((w) => writeKey(w) === parentKey)
  return (
    toParent.some((w) => w.method === 'update' && w.error === undefined) &&
    toParent.some((w) => w.error instanceof NotFoundError)
  )
}

/**
 * What a sync wrote: its children (see {@link describeChildren}), then the parent's own writes
 * (finalizer, a decorator's labels) and status, and ControllerRevisions.
 */
export function describeWrites(report: SyncReport): string {
  const parentKey = parentKeyOf(report)
  const accepted = report.writes.filter((w) => w.error === undefined)
  const toParent = (method: string): boolean =>
    accepted.some((w) => w.method === method && writeKey(w) === parentKey)
  const revisions = accepted.filter((w) => w.ref.resource === 'controllerrevisions').length
  const role = report.controller.kind === 'DecoratorController' ? 'target' : 'parent'
  return [
    describeChildren(report),
    ...(toParent('update') ? [`${role} updated`] : []),
    `status ${toParent('updateStatus') ? 'written' : 'unchanged'}`,
    ...(revisions > 0 ? [`${revisions} revision write${revisions === 1 ? '' : 's'}`] : []),
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
  if (finalizedAndGone(report) && (error === undefined || error instanceof NotFoundError)) {
    const role = report.controller.kind === 'DecoratorController' ? 'target' : 'parent'
    return [`${subject}: finalized; finalizer removed, the ${role} is gone`]
  }
  if (error === undefined) {
    if (report.hook === undefined && report.writes.length === 0) return undefined
    return [`${subject}: ${describeWrites(report)}`]
  }
  // A write the server refused wrote nothing either.
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
    // Every count owed is printed first, so no line ever comes after one that followed it.
    this.flush()
    this.#last.set(subject, { lines, count: 1, printed: 1, timer: undefined })
    this.#stamp(lines)
  }

  /**
   * Prints `lines` now, never collapsed (a reload's line), after every count owed; the lines
   * after it are news, printed whole even when they repeat the ones before it.
   */
  announce(lines: readonly string[]): void {
    this.flush()
    this.#last.clear()
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
