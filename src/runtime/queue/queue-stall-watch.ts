/**
 * Watches a work queue for keys that wait too long for a worker: the "parents hang" symptom,
 * where a controller looks idle while its queue is stuck behind slow hooks or a flood of keys.
 *
 * @module
 */
import type { Logger } from '../diagnostics/logger.js'
import type { WorkQueue } from './work-queue.js'

/** Oldest wait past which a queue is reported as stalled (2 min). */
export const QUEUE_STALL_THRESHOLD_MS = 120_000

/** How often the oldest wait is checked (15 s). */
export const QUEUE_STALL_CHECK_INTERVAL_MS = 15_000

/** Receives what the watch measures, for metrics. */
export interface QueueStallMetrics {
  /** The oldest wait at each check (0 when nothing waits). */
  oldestWait(waitedMs: number): void
  /** A stall began: the oldest wait crossed the threshold. */
  stalled(): void
}

/** Options of {@link watchQueueStall}. */
export interface QueueStallOptions {
  readonly log: Logger
  /** Defaults to {@link QUEUE_STALL_THRESHOLD_MS}. */
  readonly thresholdMs?: number
  /** Defaults to {@link QUEUE_STALL_CHECK_INTERVAL_MS}. */
  readonly checkIntervalMs?: number
  readonly metrics?: QueueStallMetrics
}

/**
 * Tells whether a check starts or ends a stall: one line per episode, not one per check, so a
 * long backlog does not flood the log.
 */
export function stallChange(
  stalled: boolean,
  waitedMs: number,
  thresholdMs: number
): 'began' | 'ended' | undefined {
  if (!stalled && waitedMs > thresholdMs) return 'began'
  if (stalled && waitedMs <= thresholdMs) return 'ended'
  return undefined
}

/**
 * Checks `queue` periodically; logs a warning and counts a stall when its oldest key has waited
 * longer than the threshold, and logs again when the queue catches up. Returns a function that
 * stops the watch.
 */
export function watchQueueStall(queue: WorkQueue, options: QueueStallOptions): () => void {
  const thresholdMs = options.thresholdMs ?? QUEUE_STALL_THRESHOLD_MS
  let stalled = false
  const check = (): void => {
    const oldest = queue.oldestWaiting()
    const waitedMs = oldest?.waitedMs ?? 0
    options.metrics?.oldestWait(waitedMs)
    const change = stallChange(stalled, waitedMs, thresholdMs)
    if (change === 'began') {
      stalled = true
      options.metrics?.stalled()
      options.log.warn('work queue stalled: a key has waited longer than the threshold', {
        queue: queue.name,
        key: oldest?.key,
        waitedMs,
        thresholdMs,
        queued: queue.len(),
        processing: queue.processingCount(),
        hint: 'slow or hanging hooks, or more keys than the workers keep up with (--workers)',
      })
    } else if (change === 'ended') {
      stalled = false
      options.log.info('work queue caught up', { queue: queue.name, waitedMs, thresholdMs })
    }
  }
  const timer = setInterval(check, options.checkIntervalMs ?? QUEUE_STALL_CHECK_INTERVAL_MS)
  // The watch must never keep a stopping engine alive.
  timer.unref()
  return () => {
    clearInterval(timer)
  }
}
