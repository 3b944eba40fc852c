/**
 * Raised when a request never got an HTTP answer: the API server refused the connection, could
 * not be resolved, failed the TLS handshake or did not answer in time. API errors (a status code
 * from the server) are {@link ApiError}s instead.
 */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError'
  /** The server URL the request was sent to. */
  readonly server: string
  /** The network error code (`ECONNREFUSED`, `ENOTFOUND`, `UND_ERR_CONNECT_TIMEOUT`…), if any. */
  readonly code: string | undefined

  /** Creates the error; `message` names the request and the network failure. */
  constructor(message: string, server: string, code: string | undefined, options?: ErrorOptions) {
    super(message, options)
    this.server = server
    this.code = code
  }
}

/** The network error code of `error` or of its first cause that has one (`ECONNREFUSED`…). */
export function networkErrorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code
  if (typeof code === 'string') return code
  const cause = (error as { cause?: unknown } | undefined)?.cause
  return cause === undefined ? undefined : networkErrorCode(cause)
}

/** Describes a network failure for a message: its code, its message and its cause's message. */
export function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as Error & { code?: unknown }).code
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ''
    return `${typeof code === 'string' ? `${code} ` : ''}${error.message}${cause}`
  }
  return String(error)
}
