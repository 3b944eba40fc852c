/**
 * Receives the events of one work queue, for instrumentation.
 *
 * @remarks
 * The hooks map onto client-go's workqueue metrics, labelled by the queue's `name`:
 * `onAdd` → `workqueue_adds_total`, `depth` → `workqueue_depth`, `onGet` →
 * `workqueue_queue_duration_seconds`, `onDone` → `workqueue_work_duration_seconds` and
 * `onRetry` → `workqueue_retries_total`. This interface keeps the queue free of any metrics
 * library; an exporter implements it. Hooks run synchronously inside queue operations, after the
 * queue's state is updated, and must not throw.
 */
export interface WorkQueueMetrics {
  /** Called when a key becomes pending (an add that was not deduplicated). */
  onAdd(key: string): void
  /** Called when a key is handed to a worker, with how long it was pending. */
  onGet(key: string, waitedMs: number): void
  /** Called when a worker finishes a key, with how long it held it. */
  onDone(key: string, workMs: number): void
  /** Called when a key is scheduled for a rate-limited retry. */
  onRetry(key: string): void
  /** Called with the number of keys waiting to be handed out whenever it changes. */
  depth(n: number): void
}

const ignore = (): void => {
  // Nothing to record: the default queue is not instrumented.
}

/** Ignores every work queue event; the default when no metrics are wanted. */
export const noopWorkQueueMetrics: WorkQueueMetrics = Object.freeze({
  onAdd: ignore,
  onGet: ignore,
  onDone: ignore,
  onRetry: ignore,
  depth: ignore,
})
