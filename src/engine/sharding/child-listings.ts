/**
 * Whether every child collection followed by shard bucket has been listed with the buckets of
 * the served ring, so a sync never reads a child cache that still lacks the children of parents
 * this replica just gained (it would create them again, and fail with AlreadyExists).
 *
 * @module
 */
import type { ShardSelection } from './shard-selection.js'

/** The child lists of the served ring, and a wait for them. */
export class ChildListings {
  readonly #selection: ShardSelection
  readonly #maxWaitMs: number
  /** Per child list-watcher, the selection's generation its last complete list was made for. */
  readonly #listed = new Map<symbol, number>()
  readonly #waiters = new Set<() => void>()

  /**
   * @param maxWaitMs - How long a sync waits at most: a collection whose informer was released
   *   never lists again, and must not hold syncs back for good.
   */
  constructor(selection: ShardSelection, maxWaitMs: number) {
    this.#selection = selection
    this.#maxWaitMs = maxWaitMs
  }

  /** A new child list-watcher's id. */
  register(): symbol {
    const id = Symbol('child list-watcher')
    this.#listed.set(id, -1)
    return id
  }

  /** A list-watcher completed a list made for the selection's `generation`. */
  listed(id: symbol, generation: number): void {
    this.#listed.set(id, generation)
    for (const wake of [...this.#waiters]) wake()
  }

  /**
   * Forgets the list-watchers still behind after the longest wait: presumably released
   * informers; a live one is known again at its next complete list.
   */
  #forgetBehind(): void {
    const generation = this.#selection.generation
    for (const [id, listed] of this.#listed) if (listed !== generation) this.#listed.delete(id)
  }

  /** Tells whether every child list was made for the served ring. */
  get current(): boolean {
    const generation = this.#selection.generation
    for (const listed of this.#listed.values()) if (listed !== generation) return false
    return true
  }

  /** Undefined when {@link current}; else resolves once it is (or after the longest wait). */
  whenCurrent(): Promise<void> | undefined {
    if (this.current) return undefined
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        this.#waiters.delete(check)
        resolve()
      }
      const check = (): void => {
        if (this.current) done()
      }
      const timer = setTimeout(() => {
        this.#forgetBehind()
        done()
      }, this.#maxWaitMs)
      this.#waiters.add(check)
    })
  }
}
