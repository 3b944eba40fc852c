/**
 * Typed errors for API server responses, built from the server's `Status` object.
 *
 * @remarks
 * The subclass tells the caller what to do: retry later ({@link TooManyRequestsError}), relist
 * ({@link GoneError}), re-read and retry ({@link ConflictError}), or fix the input
 * ({@link InvalidError}, whose `causes` list the fields the server refused).
 *
 * @module
 */
import { isJsonObject } from '../core/kube-object.js'

/** One field-level cause from `Status.details.causes`. */
export interface StatusCause {
  readonly reason?: string
  readonly message?: string
  readonly field?: string
}

/** Describes the request that failed, for error messages. */
export interface FailedRequest {
  readonly method: string
  readonly path: string
}

/** An error response from the API server. */
export class ApiError extends Error {
  override readonly name: string = 'ApiError'
  /** HTTP status code of the response. */
  readonly statusCode: number
  /** `Status.reason` (`NotFound`, `Conflict`, `Invalid`, …), or empty when the body was not a Status. */
  readonly reason: string
  /** Field-level causes, when the server gave any. */
  readonly causes: readonly StatusCause[]
  /** Delay the server asked for with `Retry-After` or `details.retryAfterSeconds`, in ms. */
  readonly retryAfterMs: number | undefined
  /** The request that failed. */
  readonly request: FailedRequest

  constructor(
    message: string,
    fields: {
      statusCode: number
      reason: string
      causes?: readonly StatusCause[]
      retryAfterMs?: number | undefined
      request: FailedRequest
    },
    options?: ErrorOptions
  ) {
    super(message, options)
    this.statusCode = fields.statusCode
    this.reason = fields.reason
    this.causes = fields.causes ?? []
    this.retryAfterMs = fields.retryAfterMs
    this.request = fields.request
  }
}

/** The object does not exist (404). */
export class NotFoundError extends ApiError {
  override readonly name = 'NotFoundError'
}
/** The write lost a race: the resourceVersion or a precondition no longer matches (409 Conflict). */
export class ConflictError extends ApiError {
  override readonly name = 'ConflictError'
}
/** The object to create already exists (409 AlreadyExists). */
export class AlreadyExistsError extends ApiError {
  override readonly name = 'AlreadyExistsError'
}
/** The resourceVersion is too old: relist (410 Gone / Expired). */
export class GoneError extends ApiError {
  override readonly name = 'GoneError'
}
/** The server asked us to slow down (429); see `retryAfterMs`. */
export class TooManyRequestsError extends ApiError {
  override readonly name = 'TooManyRequestsError'
}
/** The server refused the object; `causes` names each bad field (422 Invalid). */
export class InvalidError extends ApiError {
  override readonly name = 'InvalidError'
}
/** The credential was not accepted (401). */
export class UnauthorizedError extends ApiError {
  override readonly name = 'UnauthorizedError'
}
/** The credential is valid but not allowed to do this (403). */
export class ForbiddenError extends ApiError {
  override readonly name = 'ForbiddenError'
}

function readStatus(body: unknown): {
  reason: string
  message: string
  causes: StatusCause[]
  retryAfterSeconds: number | undefined
} {
  if (!isJsonObject(body) || body['kind'] !== 'Status') {
    return { reason: '', message: '', causes: [], retryAfterSeconds: undefined }
  }
  const details = isJsonObject(body['details']) ? body['details'] : {}
  const rawCauses = Array.isArray(details['causes']) ? (details['causes'] as unknown[]) : []
  const causes = rawCauses.filter(isJsonObject).map((cause) => {
    const out: { reason?: string; message?: string; field?: string } = {}
    if (typeof cause['reason'] === 'string') out.reason = cause['reason']
    if (typeof cause['message'] === 'string') out.message = cause['message']
    if (typeof cause['field'] === 'string') out.field = cause['field']
    return out
  })
  const retry = details['retryAfterSeconds']
  return {
    reason: typeof body['reason'] === 'string' ? body['reason'] : '',
    message: typeof body['message'] === 'string' ? body['message'] : '',
    causes,
    retryAfterSeconds: typeof retry === 'number' ? retry : undefined,
  }
}

/** Parses a `Retry-After` header given in seconds (the only form the API server sends), in ms. */
export function parseRetryAfterMs(header: string | undefined): number | undefined {
  if (header === undefined) return undefined
  const seconds = Number(header.trim())
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined
}

/** Builds the typed error for a non-2xx response from its status, body and `Retry-After` header. */
export function apiErrorFromResponse(
  statusCode: number,
  body: unknown,
  request: FailedRequest,
  retryAfterHeader?: string
): ApiError {
  const status = readStatus(body)
  const text = status.message || (typeof body === 'string' ? body.slice(0, 500) : '')
  const retryAfterMs =
    parseRetryAfterMs(retryAfterHeader) ??
    (status.retryAfterSeconds === undefined ? undefined : status.retryAfterSeconds * 1000)
  const fields = { statusCode, reason: status.reason, causes: status.causes, retryAfterMs, request }
  const message = `${request.method} ${request.path}: ${statusCode}${status.reason ? ` ${status.reason}` : ''}${text ? `: ${text}` : ''}`
  if (statusCode === 404) return new NotFoundError(message, fields)
  if (statusCode === 409 && status.reason === 'AlreadyExists')
    return new AlreadyExistsError(message, fields)
  if (statusCode === 409) return new ConflictError(message, fields)
  if (statusCode === 410) return new GoneError(message, fields)
  if (statusCode === 429) return new TooManyRequestsError(message, fields)
  if (statusCode === 422) return new InvalidError(message, fields)
  if (statusCode === 401) return new UnauthorizedError(message, fields)
  if (statusCode === 403) return new ForbiddenError(message, fields)
  return new ApiError(message, fields)
}
