/**
 * The error of a write refused because this replica does not lead; in a file of its own so the
 * engine's write guard can raise it without loading leader election.
 *
 * @module
 */

/** Refuses a write of a replica that does not lead. */
export class NotLeaderError extends Error {
  override readonly name = 'NotLeaderError'
}
