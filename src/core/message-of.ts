/**
 * The one way an error becomes text for a person or a log line.
 *
 * @module
 */

/**
 * Returns the message of an error, or the value as text when something other than an `Error`
 * was thrown: a stack never reaches the person reading it.
 */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
