/**
 * Brings observed children to the desired state: deletes first, then creates and updates, with
 * the client-side 3-way apply and the per-type update strategy, as planned by `planChildren`.
 *
 * @remarks
 * Upstream order and rules (spec §3.8): deletes carry a UID precondition and Background
 * propagation and skip objects already being deleted; creates carry the last-applied annotation
 * and the controller reference; an update is written only when the merged object differs from
 * the observed one; OnDelete never updates, Recreate deletes (the next sync creates), InPlace
 * PUTs the merged object. NotFound, Conflict and AlreadyExists are expected races and ignored;
 * other errors are collected so that one failing child does not block the others.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../kube/api-error.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import type { ObjectClient } from '../../kube/object-client.js'
import type { ChildPlan, ChildType, PlannedStep } from './plan-children.js'

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
  readonly signal?: AbortSignal
}

function ignore(error: unknown, ...kinds: (new (...args: never[]) => Error)[]): void {
  if (kinds.some((kind) => error instanceof kind)) return
  throw error
}

/** How many child writes of one parent run at once. */
export const CHILD_WRITE_CONCURRENCY = 8

function label(type: string, key: string): string {
  return `${type} ${key}`
}

/**
 * Executes a child plan: deletes, creates and updates children so that observed matches desired.
 *
 * @remarks
 * The decisions are {@link planChildren}'s (through `planSync`); this only executes its steps:
 * all deletes first, then the rest, up to {@link CHILD_WRITE_CONCURRENCY} writes at a time, so
 * that one failing child does not block the others.
 *
 * @throws AggregateError with every error that was not an expected race.
 */
export async function manageChildren(
  plan: ChildPlan,
  options: ManageChildrenOptions
): Promise<ManageResult> {
  const { client } = options
  const result: ManageResult = { created: [], updated: [], deleted: [] }
  const errors: unknown[] = []
  const call = options.signal === undefined ? {} : { signal: options.signal }

  const execute = async (step: PlannedStep, ref: ResourceRef): Promise<void> => {
    switch (step.op) {
      case 'delete':
      case 'recreate':
        try {
          await deleteChild(client, ref, step.object, call)
          result.deleted.push(label(step.type, step.key))
        } catch (error) {
          ignore(error, NotFoundError)
        }
        return
      case 'create':
        try {
          await client.create(ref, step.object, call)
          result.created.push(label(step.type, step.key))
        } catch (error) {
          ignore(error, AlreadyExistsError)
        }
        return
      case 'update':
        try {
          await client.update(ref, step.object, call)
          result.updated.push(label(step.type, step.key))
        } catch (error) {
          ignore(error, NotFoundError, ConflictError)
        }
        return
      case 'fail':
        throw step.error
      default: {
        const unreachable: never = step
        throw new Error(`unknown plan step ${String(unreachable)}`)
      }
    }
  }

  // Deletes first (a recreated or renamed child must free its name), then everything else; within
  // each phase up to CHILD_WRITE_CONCURRENCY writes run at once, and errors keep plan order.
  const runPhase = async (steps: readonly PlannedStep[]): Promise<void> => {
    const outcomes: unknown[] = new Array(steps.length)
    let next = 0
    const worker = async (): Promise<void> => {
      while (next < steps.length) {
        const index = next++
        const step = steps[index]
        // Every step's type is declared: the plan only holds those.
        const ref = step === undefined ? undefined : options.types.get(step.type)?.ref
        if (step === undefined || ref === undefined) continue
        try {
          await execute(step, ref)
        } catch (error) {
          outcomes[index] = error
        }
      }
    }
    await Promise.all(
      Array.from({ length: Math.min(CHILD_WRITE_CONCURRENCY, steps.length) }, worker)
    )
    errors.push(...outcomes.filter((e) => e !== undefined))
  }
  await runPhase(plan.steps.filter((step) => step.op === 'delete'))
  await runPhase(plan.steps.filter((step) => step.op !== 'delete'))
  if (errors.length > 0) {
    throw new AggregateError(
      errors,
      `cannot manage children: ${errors.map((e) => (e instanceof Error ? e.message : String(e))).join('; ')}`
    )
  }
  return result
}

async function deleteChild(
  client: Pick<ObjectClient, 'delete'>,
  ref: ResourceRef,
  child: KubeObject,
  call: { signal?: AbortSignal }
): Promise<void> {
  await client.delete(ref, child.metadata.name ?? '', {
    ...call,
    ...(child.metadata.namespace === undefined ? {} : { namespace: child.metadata.namespace }),
    // A UID precondition: never delete a same-named object someone created meanwhile.
    ...(child.metadata.uid === undefined ? {} : { preconditions: { uid: child.metadata.uid } }),
    // Background, so that dependents of the child (a Job's Pods) are collected, not orphaned.
    propagationPolicy: 'Background',
  })
}
