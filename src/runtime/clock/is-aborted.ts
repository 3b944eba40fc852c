/**
 * Reading an abort signal inside a loop that awaits.
 *
 * @module
 */

/**
 * Whether `signal` has aborted. `signal.aborted` changes while a loop awaits, but after one check
 * the compiler narrows it to `false` for the rest of the loop; a call keeps it from narrowing.
 */
export function isAborted(signal: AbortSignal): boolean {
  return signal.aborted
}
