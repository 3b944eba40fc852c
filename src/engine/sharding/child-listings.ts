/**
 * Whether every child collection followed by shard bucket has been listed with the buckets of
 * the served ring, so a sync never reads a child cache that still lacks the children of parents
 * this replica just gained (it would create them again, and fail with AlreadyExists).
 *
 * @remarks
 * **Giving up on a list.** A collection whose informer was released never lists again, so a
 * wait cannot last for ever: a list-watcher that has not begun a list for `maxWaitMs` is
 * forgotten (until it begins one again). One that began a list more recently is live, and is
 * waited for: forgetting it would let syncs read its cache before the list of a ring served
 * moments ago is in it (seen under load: a wait begun at one ring ran out just after the next
 * ring was served, and the replica created its gained parents' children again).
 *
 * @module
 */
import type { ShardSelection } from './shard-selection.js'

/** The child lists of the served ring, and a wait for them. */
export class ChildListings {
  readonly #selection: ShardSelection
  readonly #maxWaitMs: number
  readonly #now: () => number
  /** Per child list-watcher, the selection's generation its last complete list was made for. */
  readonly #listed = new Map<symbol, number>()
  /** Per child list-watcher, when (ms, local clock) it was registered or last began a list. */
  readonly #activeAtMs = new Map<symbol, number>()
  readonly #waiters = new Set<() => void>()

  /**
   * @param maxWaitMs - How long a list-watcher may go without beginning a list before it is
   *   presumed released and no longer waited for.
   * @param now - The local clock, in ms.
   */
  constructor(selection: ShardSelection, maxWaitMs: number, now: () => number = Date.now) {
    this.#selection = selection
    this.#maxWaitMs = maxWaitMs
    this.#now = now
  }

  /** A new child list-watcher's id. */
  register(): symbol {
    const id = Symbol('child list-watcher')
    this.#listed.set(id, -1)
    this.#activeAtMs.set(id, this.#now())
    return id
  }

  /** A list-watcher began a list: it is live, and waited for again if it had been forgotten. */
  started(id: symbol): void {
    this.#activeAtMs.set(id, this.#now())
    if (!this.#listed.has(id)) this.#listed.set(id, -1)
  }

  /** A list-watcher completed a list made for the selection's `generation`. */
  listed(id: symbol, generation: number): void {
    this.#listed.set(id, generation)
    this.#activeAtMs.set(id, this.#now())
    for (const wake of [...this.#waiters]) wake()
  }

  /** Tells whether every child list was made for the served ring. */
  get current(): boolean {
    const generation = this.#selection.generation
    for (const listed of this.#listed.values()) if (listed !== generation) return false
    return true
  }

  /**
   * Forgets the list-watchers behind that began no list for `maxWaitMs` (presumably released);
   * returns how long until the next one behind would be, if none was.
   */
  #forgetIdle(): number {
    const generation = this.#selection.generation
    const now = this.#now()
    let nextMs = this.#maxWaitMs
    for (const [id, listed] of this.#listed) {
      if (listed === generation) continue
      const idleMs = now - (this.#activeAtMs.get(id) ?? -Infinity)
      if (idleMs >= this.#maxWaitMs) this.#listed.delete(id)
      else nextMs = Math.min(nextMs, this.#maxWaitMs - idleMs)
    }
    return nextMs
  }

  /** Undefined when {@link current}; else resolves once it is (or nothing behind is live). */
  whenCurrent(): Promise<void> | undefined {
    if (this.current) return undefined
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined
      const done = (): void => {
        clearTimeout(timer)
        this.#waiters.delete(check)
        resolve()
      }
      const check = (): void => {
        if (this.current) done()
      }
      const expire = (): void => {
        const nextMs = this.#forgetIdle()
        if (this.current) done()
        else timer = setTimeout(expire, nextMs)
      }
      timer = setTimeout(expire, this.#maxWaitMs)
      this.#waiters.add(check)
    })
  }
}
