/**
 * The hash ranges this replica asks the API server for (server-side sharded watches): the ranges
 * of the ring it serves. Sharded informers list with them and relist when they change.
 *
 * @remarks
 * The ranges are those of the served ring, not its narrowed ownership: during a handoff the
 * cache keeps the parents being given away (the {@link ShardGuard} stops syncing them), and a
 * relist happens only when a new ring is served, i.e. when ownership may have grown.
 *
 * @module
 */
import type { HashRange } from '../../runtime/ring/hash-ring.js'
import type { ShardField } from '../../runtime/ring/shard-selector.js'
import { shardSelector } from '../../runtime/ring/shard-selector.js'

/** The ranges sharded informers select, and their changes. */
export class ShardSelection {
  /** What the shard hash is taken of. */
  readonly field: ShardField
  readonly #listeners = new Set<() => void>()
  #ranges: readonly HashRange[] | undefined
  #generation = 0
  #selector: string | undefined
  #ready: () => void = () => undefined
  readonly #first: Promise<void>

  constructor(field: ShardField) {
    this.field = field
    this.#first = new Promise((resolve) => {
      this.#ready = resolve
    })
  }

  /** The ranges of the served ring; undefined before the first ring. */
  get ranges(): readonly HashRange[] | undefined {
    return this.#ranges
  }

  /** Counts the changes of the ranges: 0 before the first ring, then one more at each. */
  get generation(): number {
    return this.#generation
  }

  /** The shard selector of {@link ranges}; undefined before the first ring or for no range. */
  get selector(): string | undefined {
    return this.#selector
  }

  /** Resolves once a first ring is served (or `signal` aborts: rejects with its reason). */
  ready(signal: AbortSignal): Promise<void> {
    if (this.#ranges !== undefined) return Promise.resolve()
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        reject(signal.reason as Error)
      }
      if (signal.aborted) {
        onAbort()
        return
      }
      signal.addEventListener('abort', onAbort, { once: true })
      void this.#first.then(() => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      })
    })
  }

  /** A ring was served: its ranges for this replica. Tells the listeners when they changed. */
  serve(ranges: readonly HashRange[]): void {
    const selector = shardSelector(this.field, ranges)
    const first = this.#ranges === undefined
    this.#ranges = ranges
    if (!first && selector === this.#selector) return
    this.#selector = selector
    this.#generation++
    this.#ready()
    for (const listener of [...this.#listeners]) listener()
  }

  /** Calls `listener` at every change of the ranges; returns its removal. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }
}
