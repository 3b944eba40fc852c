/**
 * The customize response cache: one answer per parent UID and generation, kept 20 minutes, as
 * upstream's `customizeCache` (spec §2.5, §8 item 20).
 *
 * @remarks
 * Keying by generation is what makes customize skip label, annotation and status changes: only a
 * spec change (a new generation) or expiry calls the hook again. Keying by UID rather than name
 * keeps a deleted and recreated parent from inheriting the old answer (upstream #414).
 *
 * @module
 */

/** Upstream's customize cache expiry. */
export const CUSTOMIZE_CACHE_TTL_MS: number = 20 * 60 * 1000

/** Upstream's cleanup period; here expired entries are swept on access at most this often. */
export const CUSTOMIZE_CACHE_CLEANUP_MS: number = 10 * 60 * 1000

/** Options of {@link CustomizeCache}. */
export interface CustomizeCacheOptions {
  /** How long an answer is used ({@link CUSTOMIZE_CACHE_TTL_MS}). */
  readonly ttlMs?: number
  /** Shortest time between two sweeps of expired entries ({@link CUSTOMIZE_CACHE_CLEANUP_MS}). */
  readonly cleanupIntervalMs?: number
  /** Milliseconds; `Date.now` when absent. */
  readonly now?: () => number
}

interface Entry<T> {
  readonly value: T
  readonly expiresAt: number
}

/** Caches one value per (parent UID, generation) for a fixed time from when it was set. */
export class CustomizeCache<T> {
  readonly #entries = new Map<string, Entry<T>>()
  readonly #ttlMs: number
  readonly #cleanupIntervalMs: number
  readonly #now: () => number
  #lastSweep: number

  /** Creates an empty cache. */
  constructor(options: CustomizeCacheOptions = {}) {
    this.#ttlMs = options.ttlMs ?? CUSTOMIZE_CACHE_TTL_MS
    this.#cleanupIntervalMs = options.cleanupIntervalMs ?? CUSTOMIZE_CACHE_CLEANUP_MS
    this.#now = options.now ?? Date.now
    this.#lastSweep = this.#now()
  }

  /** Number of entries held, expired ones not yet swept included. */
  get size(): number {
    return this.#entries.size
  }

  /** Returns the unexpired value for this parent UID and generation. */
  get(uid: string, generation: number): T | undefined {
    const now = this.#sweep()
    const entry = this.#entries.get(keyOf(uid, generation))
    // Expiry counts from the set, not the last read, as upstream: customize runs again every TTL.
    return entry !== undefined && entry.expiresAt > now ? entry.value : undefined
  }

  /** Stores a value for this parent UID and generation, replacing any older one. */
  set(uid: string, generation: number, value: T): void {
    const now = this.#sweep()
    this.#entries.set(keyOf(uid, generation), { value, expiresAt: now + this.#ttlMs })
  }

  /** Drops expired entries when the last sweep is older than the cleanup interval. */
  #sweep(): number {
    const now = this.#now()
    if (now - this.#lastSweep >= this.#cleanupIntervalMs) {
      this.#lastSweep = now
      for (const [key, entry] of this.#entries) {
        if (entry.expiresAt <= now) this.#entries.delete(key)
      }
    }
    return now
  }
}

function keyOf(uid: string, generation: number): string {
  return `${uid}/${String(generation)}`
}
