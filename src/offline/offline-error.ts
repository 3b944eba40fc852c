/**
 * Errors of an offline sync that are meant for the person who asked for it: the command line
 * prints their message without a stack.
 *
 * @module
 */

/** An error in the inputs or the hook of an offline sync, worded for the user. */
export class OfflineError extends Error {
  override readonly name = 'OfflineError'
}

/**
 * The engine would not sync the parent (a decorator's target its selectors do not select): no
 * error in the inputs, but nothing to plan; the message says why.
 */
export class NothingPlannedError extends Error {
  override readonly name = 'NothingPlannedError'
}
