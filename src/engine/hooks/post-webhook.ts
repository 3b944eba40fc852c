import { request } from 'undici'
import type { Agent } from 'undici'
import type { HookRequestObserver } from '../../runtime/hook-metrics.js'
import { RetryAfterError } from '../../runtime/reconcile-errors.js'
import { HookCallError } from './hook-errors.js'

/** Options of {@link postWebhook}. */
export interface PostWebhookOptions {
  readonly timeoutMs: number
  readonly signal?: AbortSignal
  readonly dispatcher?: Agent
  readonly now?: () => number
  /** Extra headers (`authorization`). */
  readonly headers?: Readonly<Record<string, string>>
  /** Sent as `If-None-Match`; only then are 304 and 412 accepted (ETag mode). */
  readonly ifNoneMatch?: string
  /** Receives the request for upstream's hook metrics. */
  readonly observer?: HookRequestObserver
}

/** A usable hook answer. */
export interface WebhookAnswer {
  /** The body of a 200; empty for a 304 or 412. */
  readonly body: string
  /** The response's `ETag` header, when present. */
  readonly etag: string | undefined
  /** A 304 or 412 to a request with `If-None-Match`: the cached body stands. */
  readonly notModified: boolean
}

/**
 * Parses a `Retry-After` header as upstream does: integer seconds or an HTTP date (seconds until
 * then, rounded up), in ms; unparsable values give 0.
 */
export function parseHookRetryAfterMs(header: string | undefined, nowMs: number): number {
  if (header === undefined) return 0
  const text = header.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  // Only RFC 1123 dates, as upstream (`time.RFC1123`); Date.parse alone accepts far more.
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} [A-Z]{3}$/.test(text)) return 0
  const date = Date.parse(text)
  if (Number.isNaN(date)) return 0
  return Math.max(0, Math.ceil((date - nowMs) / 1000)) * 1000
}

/**
 * POSTs a hook request body and returns the answer of a 200 (or, in ETag mode, a 304 or 412).
 *
 * @remarks
 * Follows the upstream HTTP contract: `Content-Type: application/json` exactly and a
 * Content-Length; only 200 is success (plus 304/412 when `If-None-Match` was sent); 429 becomes a
 * {@link RetryAfterError} (the parent is retried after `Retry-After`, without an event); anything
 * else is a {@link HookCallError} with upstream's wording (`unsupported status code: <code> body:
 * <body>`, `http error: …`).
 */
export async function postWebhook(
  url: string,
  body: unknown,
  options: PostWebhookOptions
): Promise<WebhookAnswer> {
  const payload = JSON.stringify(body)
  const signals = [AbortSignal.timeout(options.timeoutMs), options.signal].filter(
    (s): s is AbortSignal => s !== undefined
  )
  const end = options.observer?.begin()
  const startedMs = performance.now()
  let response
  let text
  try {
    response = await request(url, {
      method: 'POST',
      headers: {
        ...options.headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(payload)),
        ...(options.ifNoneMatch === undefined ? {} : { 'if-none-match': options.ifNoneMatch }),
      },
      body: payload,
      signal: AbortSignal.any(signals),
      ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    })
    options.observer?.onResponse(response.statusCode, (performance.now() - startedMs) / 1000)
    text = await response.body.text()
  } catch (error) {
    throw new HookCallError(url, `http error: POST ${url}: ${transportReason(error, options)}`, {
      cause: error,
    })
  } finally {
    end?.()
  }
  return answerOf(url, response.statusCode, response.headers, text, options)
}

function transportReason(error: unknown, options: PostWebhookOptions): string {
  if (error instanceof Error && error.name === 'TimeoutError') {
    return `timed out after ${options.timeoutMs} ms`
  }
  if (!(error instanceof Error)) return String(error)
  // TLS failures carry the reason in a code (e.g. UNABLE_TO_VERIFY_LEAF_SIGNATURE); say it.
  const code = (error as { code?: unknown }).code
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ''
  return typeof code === 'string' && !error.message.includes(code)
    ? `${error.message}${cause} (${code})`
    : `${error.message}${cause}`
}

function answerOf(
  url: string,
  statusCode: number,
  headers: Record<string, string | string[] | undefined>,
  text: string,
  options: PostWebhookOptions
): WebhookAnswer {
  const header = (name: string): string | undefined => {
    const value = headers[name]
    return Array.isArray(value) ? value[0] : value
  }
  if (statusCode === 200) return { body: text, etag: header('etag'), notModified: false }
  if ((statusCode === 304 || statusCode === 412) && options.ifNoneMatch !== undefined) {
    return { body: '', etag: header('etag'), notModified: true }
  }
  if (statusCode === 429) {
    const afterMs = parseHookRetryAfterMs(header('retry-after'), (options.now ?? Date.now)())
    throw new RetryAfterError(`hook ${url} asked to retry after ${afterMs / 1000} s (429)`, afterMs)
  }
  throw new HookCallError(
    url,
    `unsupported status code: ${statusCode} body: ${text.slice(0, 1000)}`
  )
}
