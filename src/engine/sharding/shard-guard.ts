/**
 * The parent loop's side of sharding: keys of parents this replica does not own are not
 * enqueued and not synced, and in-flight syncs are tracked so a handoff can wait for them.
 *
 * @module
 */
import { Action } from '../../runtime/queue/controller-loop.js'
import type { KubeObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import type { WorkQueuePriority } from '../../runtime/queue/work-queue.js'
import type { ParentShard } from './parent-shard.js'

/** Options of {@link ShardGuard}. */
export interface ShardGuardOptions {
  readonly shard: ParentShard
  /** The controller's name, for metrics. */
  readonly name: string
  /** The cached parent a key names. */
  readonly parentOf: (key: string) => KubeObject | undefined
  /** Keys of every parent of the controller. */
  readonly allKeys: () => readonly string[]
  /** Enqueues keys (already admitted) in a lane of the work queue. */
  readonly enqueue: (keys: readonly string[], priority: WorkQueuePriority) => void
}

/** Filters and tracks one parent loop's keys. */
export class ShardGuard {
  readonly #options: ShardGuardOptions
  readonly #inFlight = new Map<string, Promise<void>>()
  #unregister: (() => void) | undefined

  constructor(options: ShardGuardOptions) {
    this.#options = options
  }

  /**
   * Whether this replica serves the key's parent now. A key whose parent is not cached has
   * nothing to sync (the kinds return at once), so no replica needs to take it.
   */
  owns(key: string): boolean {
    const parent = this.#options.parentOf(key)
    return parent !== undefined && this.#options.shard.owns(parent)
  }

  /** The keys to enqueue: those this replica owns. */
  admit(keys: readonly string[]): readonly string[] {
    const owned = keys.filter((key) => this.owns(key))
    if (owned.length < keys.length)
      this.#options.shard.dropped?.(this.#options.name, keys.length - owned.length)
    return owned
  }

  /**
   * Runs a sync if this replica owns the key's parent, tracking it until it ends; otherwise drops
   * the key. The check and the tracking happen in one turn, so a drain that starts after the
   * check waits for this sync.
   */
  run(key: string, sync: () => Promise<Action>): Promise<Action> {
    if (!this.owns(key)) {
      this.#options.shard.dropped?.(this.#options.name, 1)
      return Promise.resolve(Action.awaitChange())
    }
    const waiting = this.#options.shard.childrenListed?.()
    // Re-checked after the wait: a drain may have taken the parent away meanwhile.
    const running =
      waiting === undefined
        ? sync()
        : waiting.then(() => (this.owns(key) ? sync() : Action.awaitChange()))
    // Settles either way: the loop handles a failed sync through `running`; a rejection of
    // this copy would be unhandled (and end the process) whenever no drain waits on it.
    const settled = (): void => {
      this.#settled(key, tracked)
    }
    const tracked: Promise<void> = running.then(settled, settled)
    this.#inFlight.set(key, tracked)
    return running
  }

  /** Resolves once no sync of a key this replica no longer owns runs. */
  async drain(): Promise<void> {
    for (;;) {
      const pending = [...this.#inFlight]
        .filter(([key]) => !this.owns(key))
        .map(([, running]) => running)
      if (pending.length === 0) return
      await Promise.all(pending)
    }
  }

  /** Forgets a key's sync once it ended, unless a newer sync of that key is tracked. */
  #settled(key: string, tracked: Promise<void>): void {
    if (this.#inFlight.get(key) === tracked) this.#inFlight.delete(key)
  }

  /** Takes part in handoffs from now on. */
  start(): void {
    this.#unregister ??= this.#options.shard.register({
      drain: () => this.drain(),
      resync: (gained) => {
        const { parentOf, allKeys, shard, name, enqueue } = this.#options
        let owned = 0
        const behind: string[] = []
        const synced: string[] = []
        for (const key of allKeys()) {
          const parent = parentOf(key)
          if (parent === undefined || !shard.owns(parent)) continue
          owned++
          if (gained(parent)) (specAhead(parent) ? behind : synced).push(key)
        }
        shard.owned?.(name, owned)
        shard.waiting?.(name, 0)
        // A gained parent whose spec the previous owner never reconciled (e.g. one created or
        // changed while its owner was dead) is work a user waits for; one already reconciled
        // only needs the check its dropped events would have caused, so it waits behind the
        // watch events in the low lane instead of making them wait behind it.
        enqueue(behind, 'high')
        enqueue(synced, 'low')
      },
      handoff: (moves) => {
        const { parentOf, allKeys, shard, name } = this.#options
        const moving = allKeys().filter((key) => {
          const parent = parentOf(key)
          return parent !== undefined && moves(parent)
        })
        shard.waiting?.(name, moving.length)
      },
    })
  }

  /** Stops taking part; in-flight syncs are the loop's to wait for. */
  stop(): void {
    this.#unregister?.()
    this.#unregister = undefined
  }
}

/**
 * Whether a parent's spec is ahead of what its status says was reconciled: its
 * `status.observedGeneration` (which the engine writes on every CompositeController sync) is
 * missing or behind `metadata.generation`. Parents without a generation count as ahead.
 */
function specAhead(parent: KubeObject): boolean {
  const status = parent['status']
  const observed = isJsonObject(status) ? status['observedGeneration'] : undefined
  const generation = parent.metadata.generation
  return typeof observed !== 'number' || generation === undefined || observed < generation
}
