/**
 * The response cache of one webhook in ETag mode (`webhook.etag.enabled`).
 *
 * @module
 */
import type { EtagSpec } from '../../api/webhook-security-spec.js'

interface Entry {
  readonly etag: string
  readonly body: string
  readonly storedMs: number
}

/**
 * Remembers the last `ETag` and body a hook answered per root object (`kind/namespace/name` of
 * the parent or target), so the next request can carry `If-None-Match` and a 304 or 412 can
 * reuse the body.
 */
export class EtagCache {
  readonly #entries = new Map<string, Entry>()
  readonly #timeoutMs: number | undefined
  readonly #now: () => number
  readonly #timer: NodeJS.Timeout | undefined

  constructor(spec: EtagSpec, now: () => number = Date.now) {
    this.#timeoutMs = spec.cacheTimeoutMs
    this.#now = now
    if (spec.cacheCleanupMs !== undefined) {
      this.#timer = setInterval(() => {
        this.cleanup()
      }, spec.cacheCleanupMs)
      // The cleanup must not keep the process alive.
      this.#timer.unref()
    }
  }

  /** The entry for `key`, unless absent or older than `cacheTimeoutSeconds`. */
  get(key: string): { etag: string; body: string } | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined || this.#expired(entry)) return undefined
    return entry
  }

  /** Stores the answer of a 200 that carried an `ETag`. */
  set(key: string, etag: string, body: string): void {
    this.#entries.set(key, { etag, body, storedMs: this.#now() })
  }

  /** Number of entries held, expired or not. */
  get size(): number {
    return this.#entries.size
  }

  /** Drops expired entries. */
  cleanup(): void {
    for (const [key, entry] of this.#entries) if (this.#expired(entry)) this.#entries.delete(key)
  }

  /** Stops the cleanup timer. */
  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer)
  }

  #expired(entry: Entry): boolean {
    return this.#timeoutMs !== undefined && this.#now() - entry.storedMs > this.#timeoutMs
  }
}

/** The cache key of a request body: the `parent` (or `object`) as `kind/namespace/name`. */
export function etagCacheKey(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined
  const record = body as Record<string, unknown>
  const root = record['parent'] ?? record['object']
  if (typeof root !== 'object' || root === null) return undefined
  const { kind, metadata } = root as { kind?: unknown; metadata?: Record<string, unknown> }
  const text = (value: unknown): string => (typeof value === 'string' ? value : '')
  return `${text(kind)}/${text(metadata?.['namespace'])}/${text(metadata?.['name'])}`
}
