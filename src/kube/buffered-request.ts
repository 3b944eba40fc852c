/**
 * One HTTP request whose whole response body is wanted in memory: sent with undici's `dispatch`
 * and a handler that collects the chunks.
 *
 * @remarks
 * undici's `request` wraps every response in a Node Readable stream and every request in an
 * `AsyncResource`, which the JSON calls of the engine (every API write, every hook call) read
 * whole at once anyway. Without them a request and its loopback answer cost a quarter less CPU
 * together (`bench/request-overhead.ts`: 20,000 requests at 5 in flight, under the engine's
 * `--no-opt`). Watches still use `request`: they need the stream.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { Dispatcher } from 'undici'

/** A response read whole. */
export interface BufferedResponse {
  readonly statusCode: number
  readonly headers: IncomingHttpHeaders
  /** The body's bytes as received. */
  readonly body: Buffer
}

/** What {@link requestBuffered} sends, and how long and how much it waits for. */
export interface BufferedRequestOptions {
  readonly origin: string
  /** The path with its query string. */
  readonly path: string
  readonly method: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | null
  /** Aborts the request with the signal's reason. */
  readonly signal?: AbortSignal
  /** Longest wait for the response's headers in ms; 0 for none. */
  readonly headersTimeout: number
  /** Longest wait between two chunks of the body in ms; 0 for none. */
  readonly bodyTimeout: number
  /**
   * The error to fail with when the body is declared or grows longer than `limit` bytes; no
   * limit when absent.
   */
  readonly tooLarge?: { readonly limit: number; readonly error: () => Error }
}

/** Sends one request through `dispatcher` and resolves with its whole response. */
export function requestBuffered(
  dispatcher: Dispatcher,
  options: BufferedRequestOptions
): Promise<BufferedResponse> {
  const { signal } = options
  if (signal?.aborted === true) return Promise.reject(abortReason(signal))
  return new Promise<BufferedResponse>((resolve, reject) => {
    const chunks: Buffer[] = []
    let bytes = 0
    let statusCode = 0
    let headers: IncomingHttpHeaders = {}
    let controller: Dispatcher.DispatchController | undefined
    // An abort before the request reached a socket is applied once it does, as undici's own
    // request handler does.
    let pendingAbort: Error | undefined
    const onAbort = (): void => {
      const reason = signal === undefined ? abortReason() : abortReason(signal)
      if (controller === undefined) pendingAbort = reason
      else controller.abort(reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    const settle = (): void => signal?.removeEventListener('abort', onAbort)
    const limit = options.tooLarge
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started
        if (pendingAbort !== undefined) started.abort(pendingAbort)
      },
      onResponseStart(started, code, responseHeaders) {
        // 1xx informational answers come before the real one.
        if (code < 200) return
        statusCode = code
        headers = responseHeaders
        const declared = Number(responseHeaders['content-length'])
        if (limit !== undefined && Number.isFinite(declared) && declared > limit.limit)
          started.abort(limit.error())
      },
      onResponseData(started, chunk) {
        bytes += chunk.length
        if (limit !== undefined && bytes > limit.limit) {
          started.abort(limit.error())
          return
        }
        chunks.push(chunk)
      },
      onResponseEnd() {
        settle()
        resolve({ statusCode, headers, body: Buffer.concat(chunks, bytes) })
      },
      onResponseError(_controller, error) {
        settle()
        reject(error)
      },
    }
    dispatcher.dispatch(
      {
        origin: options.origin,
        path: options.path,
        method: options.method,
        headers: options.headers,
        body: options.body,
        headersTimeout: options.headersTimeout,
        bodyTimeout: options.bodyTimeout,
      },
      handler
    )
  })
}

/** The signal's reason, or an `AbortError` when it has none. */
function abortReason(signal?: AbortSignal): Error {
  const reason: unknown = signal?.reason
  if (reason instanceof Error) return reason
  return new DOMException('This operation was aborted', 'AbortError')
}
