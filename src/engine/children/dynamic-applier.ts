/**
 * The client-side 3-way dynamic apply as a {@link ChildApplier}: upstream's default strategy.
 *
 * @remarks
 * The decisions were made by `planChildren` ({@link applyUpdate} merges); this only executes
 * them: creates POST the object carrying its last-applied annotation, InPlace updates PUT the
 * merged object, Recreate deletes (the next sync creates). NotFound, Conflict and AlreadyExists
 * are expected races and ignored.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../kube/api-error.js'
import type {
  ChildApplier,
  ChildWrite,
  ChildWriteContext,
  ChildWriteOutcome,
} from './child-applier.js'
import { deleteChild } from './delete-child.js'
import { applyUpdate, isSemanticallyEqual } from './dynamic-apply.js'
import type { ChildPlan, PlannedStep } from './plan-children.js'

/** Returns quietly for an expected race among `kinds`; rethrows anything else. */
function ignore(error: unknown, ...kinds: (new (...args: never[]) => Error)[]): void {
  if (kinds.some((kind) => error instanceof kind)) return
  throw error
}

async function execute(step: PlannedStep, context: ChildWriteContext): Promise<ChildWriteOutcome> {
  const { client, call } = context
  // Every step's type is declared: the plan only holds those.
  const ref = context.types.get(step.type)?.ref
  if (ref === undefined) return undefined
  switch (step.op) {
    case 'delete':
    case 'recreate':
      try {
        await deleteChild(client, ref, step.object, call)
        return 'deleted'
      } catch (error) {
        ignore(error, NotFoundError)
        return undefined
      }
    case 'create':
      try {
        await client.create(ref, step.object, call)
        return 'created'
      } catch (error) {
        ignore(error, AlreadyExistsError)
        return undefined
      }
    case 'update':
      try {
        await client.update(ref, step.object, call)
        return 'updated'
      } catch (error) {
        ignore(error, NotFoundError, ConflictError)
        return undefined
      }
    case 'fail':
      throw step.error
    default: {
      const unreachable: never = step
      throw new Error(`unknown plan step ${String(unreachable)}`)
    }
  }
}

/** The dynamic apply: executes the plan's create, update, recreate and failure steps. */
export const dynamicApplier: ChildApplier = {
  strategy: 'dynamic-apply',
  writes(plan: ChildPlan, context: ChildWriteContext): readonly ChildWrite[] {
    return plan.steps
      .filter((step) => step.op !== 'delete')
      .map((step) => ({
        label: `${step.type} ${step.key}`,
        run: () => execute(step, context),
      }))
  },
  forget(): void {
    // Stateless: the last-applied annotation lives on the child itself.
  },
  isUpToDate(_type: string, observed: KubeObject, desired: KubeObject): boolean {
    // Upstream's no-op test: applying the desired object over the observed one changes nothing.
    return isSemanticallyEqual(applyUpdate(observed, desired), observed)
  },
}
