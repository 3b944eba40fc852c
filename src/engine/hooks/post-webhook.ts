import { request } from 'undici'
import type { Agent } from 'undici'
import { RetryAfterError } from '../../runtime/reconcile-errors.js'
import { HookCallError } from './hook-errors.js'

/** Options of {@link postWebhook}. */
export interface PostWebhookOptions {
  readonly timeoutMs: number
  readonly signal?: AbortSignal
  readonly dispatcher?: Agent
  readonly now?: () => number
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
 * POSTs a hook request body and returns the response text of a 200.
 *
 * @remarks
 * Follows the upstream HTTP contract: `Content-Type: application/json` exactly and a
 * Content-Length; only 200 is success; 429 becomes a {@link RetryAfterError} (the parent is
 * retried after `Retry-After`, without an event); anything else is a {@link HookCallError} with
 * upstream's wording (`unsupported status code: <code> body: <body>`, `http error: …`).
 */
export async function postWebhook(
  url: string,
  body: unknown,
  options: PostWebhookOptions
): Promise<string> {
  const payload = JSON.stringify(body)
  const signals = [AbortSignal.timeout(options.timeoutMs), options.signal].filter(
    (s): s is AbortSignal => s !== undefined
  )
  let response
  try {
    response = await request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(payload)),
      },
      body: payload,
      signal: AbortSignal.any(signals),
      ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    })
  } catch (error) {
    const reason =
      error instanceof Error && error.name === 'TimeoutError'
        ? `timed out after ${options.timeoutMs} ms`
        : error instanceof Error
          ? error.message
          : String(error)
    throw new HookCallError(url, `http error: POST ${url}: ${reason}`, { cause: error })
  }
  const text = await response.body.text()
  if (response.statusCode === 200) return text
  if (response.statusCode === 429) {
    const header = response.headers['retry-after']
    const afterMs = parseHookRetryAfterMs(
      Array.isArray(header) ? header[0] : header,
      (options.now ?? Date.now)()
    )
    throw new RetryAfterError(`hook ${url} asked to retry after ${afterMs / 1000} s (429)`, afterMs)
  }
  throw new HookCallError(
    url,
    `unsupported status code: ${response.statusCode} body: ${text.slice(0, 1000)}`
  )
}
