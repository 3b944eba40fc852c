/**
 * The error of an in-stream watch `ERROR` event: its `Status` message and code.
 *
 * @module
 */
import { isJsonObject } from '../../core/kube-object.js'

/** Raised by the informer loop for an in-stream watch `ERROR` other than 410. */
export class WatchStatusError extends Error {
  override readonly name = 'WatchStatusError'
  /** The `Status.code` of the error event. */
  readonly code: number | undefined
  /** Creates the error for a `Status` with this message and code. */
  constructor(message: string, code: number | undefined) {
    super(message)
    this.code = code
  }
}

/** The error an `ERROR` watch event of the collection `description` carries in `object`. */
export function watchStatusError(description: string, object: unknown): WatchStatusError {
  const code = isJsonObject(object) ? object['code'] : undefined
  const message = isJsonObject(object) ? object['message'] : undefined
  return new WatchStatusError(
    `watch of ${description} failed: ${typeof message === 'string' ? message : 'unknown error'}`,
    typeof code === 'number' ? code : undefined
  )
}
