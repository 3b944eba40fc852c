/**
 * An informer's subscribers and how a change reaches them: each call goes to the handlers
 * subscribed when it was emitted that are still subscribed when it runs, and a handler that
 * throws is reported and skipped.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { InformerHandlers } from './informer-options.js'

/** One change, as a call to make on each subscriber's handlers. */
export type HandlerCall<T extends KubeObject> = (handlers: InformerHandlers<T>) => void

/** The subscribers of one informer. */
export class HandlerFanOut<T extends KubeObject> {
  readonly #handlers = new Set<InformerHandlers<T>>()
  readonly #onHandlerError: (error: unknown) => void

  /** @param onHandlerError - receives what a handler throws. */
  constructor(onHandlerError: (error: unknown) => void) {
    this.#onHandlerError = onHandlerError
  }

  /** Subscribes `handlers`, first handing them `current` as adds; returns the unsubscribe. */
  subscribe(handlers: InformerHandlers<T>, current: readonly T[]): () => void {
    this.#handlers.add(handlers)
    for (const object of current) this.#call(() => handlers.onAdd?.(object))
    return () => {
      this.#handlers.delete(handlers)
    }
  }

  /** Runs each call for the handlers subscribed now that are still subscribed when it runs. */
  emit(calls: readonly HandlerCall<T>[]): void {
    if (calls.length === 0) return
    const handlers = [...this.#handlers]
    for (const call of calls) {
      for (const handler of handlers) {
        if (!this.#handlers.has(handler)) continue
        this.#call(() => {
          call(handler)
        })
      }
    }
  }

  #call(fn: () => void): void {
    try {
      fn()
    } catch (error) {
      this.#onHandlerError(error)
    }
  }
}
