/**
 * Notices a hook that answers again after an outage, so that the parents that failed meanwhile
 * are retried at once instead of each waiting out its own backoff (up to 1000 s).
 *
 * @module
 */
import type { Outcome } from '../../runtime/queue/controller-loop.js'
import { HookCallError } from '../hooks/hook-errors.js'

/** Whether a reconcile failed because its hook could not be called or answered an error. */
export function isHookCallFailure(error: unknown): boolean {
  for (let e = error, depth = 0; e !== undefined && depth < 10; depth++) {
    if (e instanceof HookCallError) return true
    e = e instanceof Error ? e.cause : undefined
  }
  return false
}

/**
 * Tracks the parents of one controller whose last sync failed in its hook; the first success
 * after such failures re-queues all of them.
 */
export class HookRecovery {
  readonly #requeue: (keys: readonly string[]) => void
  readonly #failed = new Set<string>()
  /** Caps the memory a long outage of a controller with many parents can take. */
  readonly #maxTracked: number

  /** @param requeue - Adds keys to the controller's queue now. */
  constructor(requeue: (keys: readonly string[]) => void, maxTracked = 100_000) {
    this.#requeue = requeue
    this.#maxTracked = maxTracked
  }

  /** Parents waiting for the hook to come back. */
  get failing(): number {
    return this.#failed.size
  }

  /** Feeds one finished reconcile. */
  onOutcome(key: string, outcome: Outcome): void {
    if (outcome.result === 'error' && isHookCallFailure(outcome.error)) {
      if (this.#failed.size < this.#maxTracked) this.#failed.add(key)
      return
    }
    if (outcome.result !== 'success' && outcome.result !== 'requeue_after') {
      this.#failed.delete(key)
      return
    }
    this.#failed.delete(key)
    if (this.#failed.size === 0) return
    // The hook answered: every parent that failed on it can be retried now.
    const keys = [...this.#failed]
    this.#failed.clear()
    this.#requeue(keys)
  }
}
