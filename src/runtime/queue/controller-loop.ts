/**
 * The generic controller loop: workers take keys from a {@link WorkQueue}, reconcile them, and
 * map each outcome to exactly one queue operation.
 *
 * @remarks
 * **Guarantees**
 * - Level-based: the reconciler gets a key, never the event that queued it.
 * - One outcome per dequeue, chosen in one exhaustive switch (see {@link outcomeOf}):
 *   success → forget; requeue(ms) → forget + addAfter; {@link RetryAfterError} → addAfter without
 *   touching the backoff; {@link NotSyncedError} and 409 conflicts → rate-limited retry, quietly;
 *   {@link TerminalError} → forget and report; any other error or a timeout → rate-limited retry
 *   and report.
 * - A reconcile never runs twice at once for one key (the queue's guarantee), and is aborted
 *   after `reconcileTimeoutMs`.
 *
 * @module
 */
import { timeoutSignal } from '../../core/timeout-signal.js'
import type { TimeoutSignal } from '../../core/timeout-signal.js'
import { ConflictError } from '../../kube/api-error.js'
import { NotSyncedError, RetryAfterError, TerminalError } from './reconcile-errors.js'
import type { WorkQueue } from './work-queue.js'

/** What a reconcile asks the loop to do next. */
export type Action =
  { readonly type: 'awaitChange' } | { readonly type: 'requeue'; readonly afterMs: number }

/** Builds {@link Action} values. */
export const Action = {
  /** Forget the key until the next watch event. */
  awaitChange: (): Action => ({ type: 'awaitChange' }),
  /** Reconcile the key again after `afterMs`. */
  requeue: (afterMs: number): Action => ({ type: 'requeue', afterMs }),
} as const

/** Context of one reconcile. */
export interface ReconcileContext {
  /** Aborted on shutdown or when the reconcile times out. */
  readonly signal: AbortSignal
}

/** Reconciles one key. */
export type Reconcile = (key: string, context: ReconcileContext) => Promise<Action>

/** The loop's decision for one reconcile, with the metric label it carries. */
export type Outcome =
  | { readonly result: 'success' }
  | { readonly result: 'requeue_after'; readonly afterMs: number }
  | { readonly result: 'retry_after'; readonly afterMs: number; readonly error: RetryAfterError }
  | { readonly result: 'not_synced'; readonly error: unknown }
  | { readonly result: 'conflict'; readonly error: unknown }
  | { readonly result: 'terminal'; readonly error: TerminalError }
  | { readonly result: 'error'; readonly error: unknown }

/** Classifies a reconcile's result or error. */
export function outcomeOf(settled: { action: Action } | { error: unknown }): Outcome {
  if ('action' in settled) {
    const { action } = settled
    switch (action.type) {
      case 'awaitChange':
        return { result: 'success' }
      case 'requeue':
        return { result: 'requeue_after', afterMs: action.afterMs }
      default: {
        const unreachable: never = action
        throw new Error(`unknown action ${JSON.stringify(unreachable)}`)
      }
    }
  }
  const { error } = settled
  if (error instanceof RetryAfterError)
    return { result: 'retry_after', afterMs: error.afterMs, error }
  if (error instanceof NotSyncedError) return { result: 'not_synced', error }
  if (error instanceof ConflictError) return { result: 'conflict', error }
  if (error instanceof TerminalError) return { result: 'terminal', error }
  return { result: 'error', error }
}

/** Hooks for logs, events and metrics about each finished reconcile. */
export interface ControllerLoopObserver {
  /** A worker starts reconciling `key`; {@link onOutcome} follows when it ends. */
  onStart?(key: string): void
  onOutcome?(key: string, outcome: Outcome, durationMs: number): void
}

/** Options of {@link ControllerLoop}. */
export interface ControllerLoopOptions {
  readonly queue: WorkQueue
  readonly reconcile: Reconcile
  /** Concurrent workers (5, as upstream `--workers`). */
  readonly workers?: number
  /** Aborts a reconcile that runs longer than this (5 min). */
  readonly reconcileTimeoutMs?: number
  readonly observer?: ControllerLoopObserver
  /**
   * Workers take no key before this settles (e.g. until this replica leads); keys queued meanwhile
   * wait in the queue.
   */
  readonly gate?: Promise<void>
}

/** Runs workers over a work queue until stopped. */
export class ControllerLoop {
  readonly #options: ControllerLoopOptions
  readonly #stop = new AbortController()
  readonly #stopping = new AbortController()
  #workers: Promise<void>[] = []

  constructor(options: ControllerLoopOptions) {
    this.#options = options
  }

  /** Starts the workers. */
  start(): void {
    if (this.#workers.length > 0) return
    const count = this.#options.workers ?? 5
    this.#workers = Array.from({ length: count }, () => this.#work())
  }

  /**
   * Stops taking keys, lets in-flight reconciles finish for up to `graceMs` (then aborts them),
   * and resolves once every worker has returned.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.#stopping.abort(new Error('controller stopping'))
    const drained = this.#options.queue.shutDownWithDrain(graceMs)
    const finished = await drained
    if (!finished) this.#stop.abort(new Error('controller stopping'))
    await Promise.all(this.#workers)
    this.#workers = []
  }

  async #work(): Promise<void> {
    const { queue, gate } = this.#options
    if (gate !== undefined && !(await opened(gate, this.#stopping.signal))) return
    for (;;) {
      // Once stopping, queued keys stay queued: the next leader or replica syncs them, and a
      // leader draining its queue before releasing its Lease held up every handover by the grace.
      if (this.#stopping.signal.aborted) return
      let key: string | undefined
      try {
        key = await queue.get(this.#stop.signal)
      } catch {
        return
      }
      if (key === undefined) return
      try {
        await this.#process(key)
      } finally {
        queue.done(key)
      }
    }
  }

  /**
   * The signal of one reconcile: aborted by {@link stop} or after `reconcileTimeoutMs`, and let go
   * of when the reconcile ends (see {@link timeoutSignal} for why not `AbortSignal.timeout`).
   */
  #reconcileSignal(): TimeoutSignal {
    return timeoutSignal(this.#options.reconcileTimeoutMs ?? 300_000, [this.#stop.signal])
  }

  async #process(key: string): Promise<void> {
    const { queue, reconcile } = this.#options
    const started = Date.now()
    try {
      this.#options.observer?.onStart?.(key)
    } catch {
      // As below: an observer must not stop a worker.
    }
    const { signal, release } = this.#reconcileSignal()
    let settled: { action: Action } | { error: unknown }
    try {
      settled = { action: await reconcile(key, { signal }) }
    } catch (error) {
      settled = { error }
    } finally {
      release()
    }
    const outcome = outcomeOf(settled)
    switch (outcome.result) {
      case 'success':
        queue.forget(key)
        break
      case 'requeue_after':
        queue.forget(key)
        queue.addAfter(key, outcome.afterMs)
        break
      case 'retry_after':
        queue.addAfter(key, outcome.afterMs)
        break
      case 'not_synced':
      case 'conflict':
      case 'error':
        queue.addRateLimited(key)
        break
      case 'terminal':
        queue.forget(key)
        break
      default: {
        const unreachable: never = outcome
        throw new Error(`unhandled outcome ${JSON.stringify(unreachable)}`)
      }
    }
    try {
      this.#options.observer?.onOutcome?.(key, outcome, Date.now() - started)
    } catch {
      // Observers are for logs and metrics; one that throws must not stop a worker.
    }
  }
}

/** Waits for `gate`; false when `signal` aborts first or the gate rejects. */
function opened(gate: Promise<void>, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false)
  return new Promise((resolve) => {
    const onAbort = (): void => {
      resolve(false)
    }
    signal.addEventListener('abort', onAbort, { once: true })
    gate.then(
      () => {
        signal.removeEventListener('abort', onAbort)
        resolve(!signal.aborted)
      },
      () => {
        signal.removeEventListener('abort', onAbort)
        resolve(false)
      }
    )
  })
}
