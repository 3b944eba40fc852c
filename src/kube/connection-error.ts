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
