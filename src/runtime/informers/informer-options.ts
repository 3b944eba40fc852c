/**
 * What an {@link Informer} is told: its handlers, its observer and its options, and the
 * transform most users pass ({@link stripManagedFields}).
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { JitteredBackoffOptions } from '../rate-limit/backoff.js'
import type { Clock } from '../clock/clock.js'
import type { WatchListFallback } from './watch-list-fallbacks.js'

/** Callbacks for cache changes. */
export interface InformerHandlers<T extends KubeObject = KubeObject> {
  /** Receives an object that entered the cache. */
  onAdd?(object: T): void
  /** Receives the cached object and the one that replaced it (a newer resourceVersion). */
  onUpdate?(oldObject: T, newObject: T): void
  /** Receives the last known state of the deleted object. */
  onDelete?(object: T): void
}

/**
 * Why an informer relisted or restarted its watch, for metrics: `initial` (the first list),
 * `gone` (410), `error` (any other failure), `idle` (the watchdog fired) or `closed` (a watch
 * ended without delivering anything).
 */
export type InformerRestartReason = 'initial' | 'gone' | 'error' | 'idle' | 'closed'

/** Observes informer lifecycle events, for metrics and logs; exceptions it throws are ignored. */
export interface InformerObserver {
  /** Called before each list, the first one included. */
  onRelist?(description: string, reason: InformerRestartReason): void
  /** Called when a watch is reopened for a reason other than a normal server timeout. */
  onWatchRestart?(description: string, reason: InformerRestartReason): void
  /** Called for each failure that is retried after `retryInMs`. */
  onError?(description: string, error: unknown, retryInMs: number): void
  /** Called when a handler throws; the informer goes on with the next handler. */
  onHandlerError?(description: string, error: unknown): void
  /** Called when the server refused a streaming initial list; the informer lists from then on. */
  onWatchListFallback?(description: string, error: unknown): void
}

/** Options of {@link Informer}. */
export interface InformerOptions {
  /** Clock for backoff and the idle watchdog ({@link systemClock}). */
  readonly clock?: Clock
  /** Objects per list page (500, as client-go). */
  readonly pageSize?: number
  /** Server-side watch timeout range; a random value in it spreads reconnects (300–600 s). */
  readonly watchTimeoutSeconds?: { readonly min: number; readonly max: number }
  /** Restarts a watch that delivered nothing for this long (150 s; bookmarks come about every minute). */
  readonly idleTimeoutMs?: number
  /** Retry backoff after failures (800 ms doubling to 30 s, 20 % jitter). */
  readonly backoff?: JitteredBackoffOptions
  /** Source of uniform numbers in [0, 1) for jitter and watch timeouts (`Math.random`). */
  readonly random?: () => number
  /** Receives lifecycle events. */
  readonly observer?: InformerObserver
  /**
   * Takes each (re)list as a streaming initial list (KEP-3157 WatchList: a watch with
   * `sendInitialEvents=true`) when the `ListWatcher` offers one and the server has not
   * refused it (true; client-go's `WatchListClient` gate).
   */
  readonly watchList?: boolean
  /** Where a refusal of streaming initial lists is remembered (one of the informer's own). */
  readonly watchListFallback?: WatchListFallback
  /**
   * Rewrites each object before it is cached and handed to handlers, e.g.
   * {@link stripManagedFields} to save memory. It must keep `metadata.name`, `namespace` and
   * `resourceVersion`.
   */
  readonly transform?: (object: KubeObject) => KubeObject
}

/**
 * Drops `metadata.managedFields`, which is often a third of an object's size and is only read by
 * server-side apply on the server (controller-runtime offers the same transform).
 */
export function stripManagedFields(object: KubeObject): KubeObject {
  if (!('managedFields' in object.metadata)) return object
  const metadata = { ...object.metadata }
  delete metadata['managedFields']
  return { ...object, metadata }
}

/** Throws a RangeError for options an informer cannot run with (the backoff is checked apart). */
export function checkInformerOptions(options: InformerOptions): void {
  const { pageSize, idleTimeoutMs, watchTimeoutSeconds } = options
  if (pageSize !== undefined && !(Number.isInteger(pageSize) && pageSize > 0)) {
    throw new RangeError(`pageSize must be a positive integer, got ${pageSize}`)
  }
  if (idleTimeoutMs !== undefined && !(idleTimeoutMs > 0)) {
    throw new RangeError(`idleTimeoutMs must be positive, got ${idleTimeoutMs}`)
  }
  if (
    watchTimeoutSeconds !== undefined &&
    !(watchTimeoutSeconds.min >= 0 && watchTimeoutSeconds.max >= watchTimeoutSeconds.min)
  ) {
    throw new RangeError('watchTimeoutSeconds needs 0 <= min <= max')
  }
}
