/**
 * Whether an error is, or was caused by, an API server 403: the request's right is missing.
 *
 * @module
 */
import { ForbiddenError } from '../../kube/api-error.js'

/** Tells whether `error` or one of its causes is a {@link ForbiddenError}. */
export function isForbidden(error: unknown): boolean {
  let e = error
  for (let depth = 0; e !== undefined && depth < 10; depth++) {
    if (e instanceof ForbiddenError) return true
    e = e instanceof Error ? e.cause : undefined
  }
  return false
}
