/**
 * The typed API errors the in-memory API server answers with, built the way the real client
 * builds them (from a `Status` body), so that callers see the very classes production sees.
 *
 * @module
 */
import { apiErrorFromResponse } from '../kube/api-error.js'
import type { ApiError } from '../kube/api-error.js'

/** The `Status` reasons the fake uses, with their HTTP status codes. */
const CODES = {
  NotFound: 404,
  Conflict: 409,
  AlreadyExists: 409,
  Invalid: 422,
  BadRequest: 400,
  Expired: 410,
  InternalError: 500,
  TooManyRequests: 429,
  ServiceUnavailable: 503,
} as const

/** A `Status` reason the fake can answer with. */
export type FakeErrorReason = keyof typeof CODES

/**
 * Builds the typed error (`NotFoundError`, `ConflictError`, ...) the real client raises for a
 * `Status` with this reason and message, e.g. to inject with `FakeCluster.failNext`.
 */
export function fakeApiError(
  reason: FakeErrorReason,
  message: string,
  request: { readonly method: string; readonly path: string } = { method: 'FAKE', path: '/' }
): ApiError {
  const code = CODES[reason]
  return apiErrorFromResponse(
    code,
    { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code },
    request
  )
}
