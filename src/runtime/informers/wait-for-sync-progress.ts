/**
 * Waiting for informers' first sync for as long as they make progress: a list of 100,000 objects
 * on a loaded API server may take minutes and is fine; a cache that receives nothing (no right to
 * list it, an API that went away) is stuck, and the wait ends with the caches that are.
 *
 * @module
 */
import type { Clock } from '../clock/clock.js'
import { systemClock } from '../clock/clock.js'

/** What {@link waitForSyncProgress} needs of an informer. */
export interface SyncProgressSource {
  /** The collection, named in the error. */
  readonly description: string
  hasSynced(): boolean
  /** Milliseconds since the last list page or watch event; undefined before any. */
  lastEventAgeMs(): number | undefined
  waitForSync(signal?: AbortSignal): Promise<void>
}

/** Options of {@link waitForSyncProgress}. */
export interface SyncProgressOptions {
  /** How long an unsynced cache may receive nothing before the wait fails. */
  readonly stallMs: number
  /** Ends the wait (rejecting with its reason), e.g. shutdown. */
  readonly signal?: AbortSignal
  readonly clock?: Clock
}

/** Caches that received nothing from the API server for the stall time before their first sync. */
export class CacheSyncStalledError extends Error {
  override readonly name = 'CacheSyncStalledError'
  /** Descriptions of the stalled caches. */
  readonly stalled: readonly string[]

  constructor(stalled: readonly string[], stallMs: number) {
    super(
      `${stalled.join(', ')} received nothing from the API server for ${stallMs / 1000} s ` +
        'before its first sync'
    )
    this.stalled = stalled
  }
}

/**
 * Resolves once every source has synced; rejects with {@link CacheSyncStalledError} when an
 * unsynced one has received no list page or watch event for `stallMs` (counted from the call
 * for one that received nothing yet), or with the signal's reason when it aborts first.
 */
export async function waitForSyncProgress(
  sources: readonly SyncProgressSource[],
  options: SyncProgressOptions
): Promise<void> {
  const clock = options.clock ?? systemClock
  const startedAt = clock.now()
  const stalled = new AbortController()
  const inner =
    options.signal === undefined
      ? stalled.signal
      : AbortSignal.any([options.signal, stalled.signal])
  // Checked a few times per stall time, so a stall is reported at most a quarter late.
  const checkMs = Math.max(options.stallMs / 4, 1)
  let timer = clock.setTimeout(check, checkMs)
  function check(): void {
    const waitedMs = clock.now() - startedAt
    const stuck = sources
      .filter((s) => !s.hasSynced() && (s.lastEventAgeMs() ?? waitedMs) >= options.stallMs)
      .map((s) => s.description)
    if (stuck.length > 0) {
      stalled.abort(new CacheSyncStalledError(stuck, options.stallMs))
      return
    }
    timer = clock.setTimeout(check, checkMs)
  }
  try {
    await Promise.all(sources.map((s) => s.waitForSync(inner)))
  } finally {
    clock.clearTimeout(timer)
  }
}
