/**
 * Brings observed children to the desired state: deletes first, then creates and updates through
 * the engine's applier (the client-side 3-way dynamic apply, or server-side apply), as planned by
 * `planChildren`.
 *
 * @remarks
 * Upstream order and rules (spec §3.8, §4): deletes carry a UID precondition and Background
 * propagation, skip objects already being deleted, and are the same under both apply strategies;
 * what is written for desired children is the applier's business ({@link ChildApplier}). Errors
 * are collected so that one failing child does not block the others.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { NotFoundError } from '../../kube/api-error.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import { redactSecrets } from '../hooks/redact-secrets.js'
import { mergePatchDiff } from './child-diff.js'
import type { ObjectClient } from '../../kube/object-client.js'
import type { ChildApplier, ChildWrite, ChildWriteContext } from './child-applier.js'
import { deleteChild } from './delete-child.js'
import { dynamicApplier } from './dynamic-applier.js'
import type { ChildPlan, ChildType } from './plan-children.js'
import { messageOf } from '../../core/message-of.js'

export type { ChildType } from './plan-children.js'

/** What {@link manageChildren} did, for logs and tests. */
export interface ManageResult {
  readonly created: string[]
  readonly updated: string[]
  readonly deleted: string[]
}

/** Options of {@link manageChildren}. */
export interface ManageChildrenOptions {
  readonly client: Pick<ObjectClient, 'create' | 'update' | 'delete'>
  /** Child types by GVK key: where each planned step is written. */
  readonly types: ReadonlyMap<string, ChildType>
  /** How desired children are written; the dynamic apply when absent. */
  readonly applier?: ChildApplier
  readonly signal?: AbortSignal
  /** Receives upstream's graded lines: `V(5)`, the merge diff of every update. */
  readonly log?: Logger
}

/** Verbosity of merge diffs, as upstream's `--zap-log-level=5`. */
export const MERGE_DIFF_VERBOSITY = 5

function typeOf(object: KubeObject): { apiVersion: string; kind: string } {
  return { apiVersion: object.apiVersion, kind: object.kind }
}

function logDiffs(plan: ChildPlan, log: Logger | undefined): void {
  if (!log?.enabled(MERGE_DIFF_VERBOSITY)) return
  for (const step of plan.update) {
    // Typed as its object, so that a Secret's values are redacted; the type is not a change.
    const typed = { ...mergePatchDiff(step.observed, step.object), ...typeOf(step.object) }
    const diff = redactSecrets(typed) as Record<string, unknown>
    delete diff['apiVersion']
    delete diff['kind']
    log.v(MERGE_DIFF_VERBOSITY, 'child diff', {
      child: `${step.type} ${step.key}`,
      method: step.method,
      diff,
    })
  }
}

/** How many child writes of one parent run at once. */
export const CHILD_WRITE_CONCURRENCY = 8

/**
 * Executes a child plan: deletes, creates and updates children so that observed matches desired.
 *
 * @remarks
 * The decisions are {@link planChildren}'s (through `planSync`) and, for desired children, the
 * applier's: all deletes first, then the rest, up to {@link CHILD_WRITE_CONCURRENCY} writes at a
 * time, so that one failing child does not block the others.
 *
 * @throws AggregateError with every error that was not an expected race.
 */
export async function manageChildren(
  plan: ChildPlan,
  options: ManageChildrenOptions
): Promise<ManageResult> {
  const applier = options.applier ?? dynamicApplier
  logDiffs(plan, options.log)
  const context: ChildWriteContext = {
    client: options.client,
    types: options.types,
    call: options.signal === undefined ? {} : { signal: options.signal },
  }
  const result: ManageResult = { created: [], updated: [], deleted: [] }
  const deletes: ChildWrite[] = plan.delete.map((step) => ({
    label: `${step.type} ${step.key}`,
    run: async () => {
      const ref = options.types.get(step.type)?.ref
      if (ref === undefined) return undefined
      applier.forget(step.type, step.object)
      try {
        await deleteChild(options.client, ref, step.object, context.call)
        return 'deleted'
      } catch (error) {
        if (error instanceof NotFoundError) return undefined
        throw error
      }
    },
  }))
  // Deletes first (a recreated or renamed child must free its name), then everything else.
  const errors = [
    ...(await runPhase(deletes, result)),
    ...(await runPhase(applier.writes(plan, context), result)),
  ]
  if (errors.length > 0) {
    throw new AggregateError(
      errors,
      `cannot manage children: ${errors.map((e) => messageOf(e)).join('; ')}`
    )
  }
  return result
}

/** Runs writes up to {@link CHILD_WRITE_CONCURRENCY} at a time; returns errors in write order. */
async function runPhase(writes: readonly ChildWrite[], result: ManageResult): Promise<unknown[]> {
  const outcomes: unknown[] = new Array(writes.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < writes.length) {
      const index = next++
      const write = writes[index]
      if (write === undefined) continue
      try {
        const done = await write.run()
        if (done !== undefined) result[done].push(write.label)
      } catch (error) {
        outcomes[index] = error
      }
    }
  }
  await Promise.all(
    Array.from({ length: Math.min(CHILD_WRITE_CONCURRENCY, writes.length) }, worker)
  )
  return outcomes.filter((e) => e !== undefined)
}
