/**
 * The customize response cache: one answer per parent UID and generation, kept 20 minutes, as
 * upstream's `customizeCache` (spec §2.5, §8 item 20).
 *
 * @remarks
 * Keying by generation is what makes customize skip label, annotation and status changes: only a
 * spec change (a new generation) or expiry calls the hook again. Keying by UID rather than name
 * keeps a deleted and recreated parent from inheriting the old answer (upstream #414).
 *
 * Memory is bounded: a parent keeps only its newest generation's answer (a sync always reads
 * the parent's current generation, so older answers would never be read again), and the cache
 * holds at most `maxEntries` parents, dropping the longest-held answer first. The owner drops
 * the answers of deleted parents with {@link CustomizeCache.retain}.
 *
 * @module
 */

/** Upstream's customize cache expiry. */
export const CUSTOMIZE_CACHE_TTL_MS: number = 20 * 60 * 1000

/** Upstream's cleanup period; here expired entries are swept on access at most this often. */
export const CUSTOMIZE_CACHE_CLEANUP_MS: number = 10 * 60 * 1000

/** Most parents whose answers are held at once (beyond the 10,000-parent scale aimed at). */
export const CUSTOMIZE_CACHE_MAX_ENTRIES = 50_000

/** Options of {@link CustomizeCache}. */
export interface CustomizeCacheOptions {
  /** How long an answer is used ({@link CUSTOMIZE_CACHE_TTL_MS}). */
  readonly ttlMs?: number
  /** Shortest time between two sweeps of expired entries ({@link CUSTOMIZE_CACHE_CLEANUP_MS}). */
  readonly cleanupIntervalMs?: number
  /** Most parents held at once ({@link CUSTOMIZE_CACHE_MAX_ENTRIES}). */
  readonly maxEntries?: number
  /** Milliseconds; `Date.now` when absent. */
  readonly now?: () => number
}

interface Entry<T> {
  readonly generation: number
  readonly value: T
  readonly expiresAt: number
}

/** Caches one value per (parent UID, generation) for a fixed time from when it was set. */
export class CustomizeCache<T> {
  /** By parent UID, in the order the answers were set (oldest first, for eviction). */
  readonly #entries = new Map<string, Entry<T>>()
  readonly #ttlMs: number
  readonly #maxEntries: number
  readonly #cleanupIntervalMs: number
  readonly #now: () => number
  #lastSweep: number

  /** Creates an empty cache. */
  constructor(options: CustomizeCacheOptions = {}) {
    this.#ttlMs = options.ttlMs ?? CUSTOMIZE_CACHE_TTL_MS
    this.#cleanupIntervalMs = options.cleanupIntervalMs ?? CUSTOMIZE_CACHE_CLEANUP_MS
    this.#maxEntries = Math.max(1, options.maxEntries ?? CUSTOMIZE_CACHE_MAX_ENTRIES)
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
    const entry = this.#entries.get(uid)
    if (entry?.generation !== generation) return undefined
    // Expiry counts from the set, not the last read, as upstream: customize runs again every TTL.
    return entry.expiresAt > now ? entry.value : undefined
  }

  /** Stores a value for this parent UID and generation, replacing the parent's older one. */
  set(uid: string, generation: number, value: T): void {
    const now = this.#sweep()
    // Deleting first moves the parent to the end of the eviction order.
    this.#entries.delete(uid)
    this.#entries.set(uid, { generation, value, expiresAt: now + this.#ttlMs })
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#maxEntries) break
      this.#entries.delete(oldest)
    }
  }

  /** Drops the answers of the parents `keep` refuses (by UID) and returns how many it dropped. */
  retain(keep: (uid: string) => boolean): number {
    let dropped = 0
    for (const uid of this.#entries.keys()) {
      if (keep(uid)) continue
      this.#entries.delete(uid)
      dropped += 1
    }
    return dropped
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
