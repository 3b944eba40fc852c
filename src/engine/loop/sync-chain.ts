/**
 * The way into a sync as one chain of named steps, each wrapping the rest (the middleware style
 * of Hono's `compose`): a step may answer without going on (a parent outside this replica's
 * shard), or run `next` and act on its outcome (answer a `metactl sync` request).
 *
 * @module
 */
import type { Action, Reconcile, ReconcileContext } from '../../runtime/queue/controller-loop.js'

/** One step before a sync: runs `next` (the rest of the chain) or answers in its place. */
export type SyncStep = (
  key: string,
  context: ReconcileContext,
  next: () => Promise<Action>
) => Promise<Action>

/**
 * Composes `steps`, outermost first, around `sync`; an `undefined` step (a feature that is off)
 * is left out, so the chain reads as the list of what runs.
 */
export function composeSync(steps: readonly (SyncStep | undefined)[], sync: Reconcile): Reconcile {
  const present = steps.filter((step): step is SyncStep => step !== undefined)
  return (key, context) => {
    const from = (index: number): Promise<Action> => {
      const step = present[index]
      return step === undefined ? sync(key, context) : step(key, context, () => from(index + 1))
    }
    return from(0)
  }
}
