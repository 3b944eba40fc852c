import { timeoutSignal } from '../../core/timeout-signal.js'
import { globalDispatcher } from '../../kube/undici-core.js'
import { requestBuffered } from '../../kube/buffered-request.js'
import type { Dispatcher } from 'undici'
import type { HookRequestObserver } from '../metrics/hook-metrics.js'
import { RetryAfterError } from '../../runtime/queue/reconcile-errors.js'
import { HookCallError } from './hook-errors.js'

/** Options of {@link postWebhook}. */
export interface PostWebhookOptions {
  readonly timeoutMs: number
  readonly signal?: AbortSignal
  readonly dispatcher?: Dispatcher
  readonly now?: () => number
  /** Extra headers (`authorization`). */
  readonly headers?: Readonly<Record<string, string>>
  /** Sent as `If-None-Match`; only then are 304 and 412 accepted (ETag mode). */
  readonly ifNoneMatch?: string
  /** Receives the request for upstream's hook metrics. */
  readonly observer?: HookRequestObserver
  /** Largest response body accepted ({@link DEFAULT_MAX_RESPONSE_BYTES}). */
  readonly maxResponseBytes?: number
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

/** Default limit of a hook response body (64 MiB): far above any sane answer, far below OOM. */
export const DEFAULT_MAX_RESPONSE_BYTES: number = 64 * 1024 * 1024

/**
 * Longest `Retry-After` a hook's 429 is honoured for (5 min); longer values are capped, so a
 * hook that answers with a date far ahead cannot park a parent for days.
 */
export const MAX_HOOK_RETRY_AFTER_MS: number = 5 * 60_000

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
  const deadline = timeoutSignal(options.timeoutMs, [options.signal])
  const end = options.observer?.begin()
  const startedMs = performance.now()
  const started = Date.now()
  const limit = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES
  let response
  try {
    // Inside the try: a URL that does not parse is a hook call error like any other.
    const target = new URL(url)
    response = await requestBuffered(options.dispatcher ?? globalDispatcher(), {
      origin: target.origin,
      path: `${target.pathname}${target.search}`,
      method: 'POST',
      headers: {
        ...options.headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(payload)),
        ...(options.ifNoneMatch === undefined ? {} : { 'if-none-match': options.ifNoneMatch }),
      },
      body: payload,
      signal: deadline.signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      // Checked on the declared Content-Length first, then as the body arrives, so an oversized
      // answer never sits in memory whole.
      tooLarge: {
        limit,
        error: () => new HookCallError(url, `response too large: more than ${limit} bytes`),
      },
    })
    options.observer?.onResponse(response.statusCode, (performance.now() - startedMs) / 1000)
  } catch (error) {
    if (error instanceof HookCallError) throw error
    throw callError(url, error, options, started)
  } finally {
    deadline.release()
    end?.()
  }
  const text = response.body.toString('utf8')
  return answerOf(url, response.statusCode, response.headers, text, options)
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
  if (statusCode === 429) throw tooManyRequests(url, headers, options)
  throw new HookCallError(
    url,
    `unsupported status code: ${statusCode} body: ${text.slice(0, 1000)}`
  )
}

/** One message per fault kind: every timeout reads the same, whichever timer fired. */
function callError(
  url: string,
  error: unknown,
  options: PostWebhookOptions,
  started: number
): HookCallError {
  const name = error instanceof Error ? error.name : ''
  const code = isCoded(error) ? error.code : ''
  const timedOut =
    name === 'TimeoutError' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    (name === 'AbortError' &&
      options.signal?.aborted !== true &&
      Date.now() - started >= options.timeoutMs)
  const reason = timedOut ? `timed out after ${options.timeoutMs} ms` : transportReason(error)
  return new HookCallError(url, `http error: POST ${url}: ${reason}`, { cause: error })
}

function transportReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  // TLS failures carry the reason in a code (e.g. UNABLE_TO_VERIFY_LEAF_SIGNATURE); say it.
  const code = isCoded(error) ? error.code : undefined
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ''
  return code !== undefined && !error.message.includes(code)
    ? `${error.message}${cause} (${code})`
    : `${error.message}${cause}`
}

function isCoded(error: unknown): error is { code: string } {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string'
  )
}

/**
 * A 429: with a `Retry-After`, retry then (capped at {@link MAX_HOOK_RETRY_AFTER_MS}, backoff
 * untouched); without one (or an unusable one), an ordinary failure, so the parent backs off
 * exponentially instead of being retried in a hot loop.
 */
function tooManyRequests(
  url: string,
  headers: Record<string, string | string[] | undefined>,
  options: PostWebhookOptions
): Error {
  const header = headers['retry-after']
  const afterMs = parseHookRetryAfterMs(
    Array.isArray(header) ? header[0] : header,
    (options.now ?? Date.now)()
  )
  if (afterMs <= 0)
    return new HookCallError(url, `unsupported status code: 429 without a usable Retry-After`)
  const capped = Math.min(afterMs, MAX_HOOK_RETRY_AFTER_MS)
  return new RetryAfterError(`hook ${url} asked to retry after ${capped / 1000} s (429)`, capped)
}
