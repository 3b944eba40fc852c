/**
 * Which hook a sync calls (spec §2.7), the same rule for both controller kinds.
 *
 * @module
 */

/** The hook a sync calls, or `none` when the controller has no hook for this case. */
export type HookChoice = 'sync' | 'finalize' | 'none'

/** The facts {@link chooseHook} decides on. */
export interface HookChoiceState {
  readonly syncEnabled: boolean
  readonly finalizeEnabled: boolean
  /** The parent has a deletionTimestamp. */
  readonly deleting: boolean
  /** The parent still matches the controller's own selector (it has not opted out). */
  readonly inScope: boolean
}

/**
 * Picks finalize when it is enabled and the parent is being deleted or has left the controller's
 * selector (the opt-out cleanup); otherwise sync when it is enabled; otherwise none.
 */
export function chooseHook(state: HookChoiceState): HookChoice {
  if (state.finalizeEnabled && (state.deleting || !state.inScope)) return 'finalize'
  return state.syncEnabled ? 'sync' : 'none'
}
