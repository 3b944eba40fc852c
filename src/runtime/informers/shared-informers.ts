/**
 * Shared informers: one informer per watched collection, however many controllers read it.
 *
 * @remarks
 * **Expected flow** A controller calls {@link SharedInformers.acquire} for each collection it
 * needs, subscribes to the informer it gets, and calls `release()` when it stops. The first
 * acquire of a collection starts its informer; the last release stops it.
 *
 * **Guarantees**
 * - A collection is identified by resource (group, version, plural), namespace, label selector
 *   and field selector. Acquires with the same identity share one informer and one
 *   {@link ListWatcher}; any difference gets its own. An empty selector is the same as none,
 *   and the namespace is ignored for a cluster-scoped resource.
 * - `release()` is idempotent per handle: calling it twice drops one hold, not two.
 * - An acquire after the last release (even while that informer is still stopping) starts a
 *   fresh informer, with a fresh cache.
 * - A resource whose server refused a streaming initial list is listed by all its informers
 *   from then on, without asking again.
 *
 * **Caveats** The object type `T` of {@link SharedInformers.acquire} is trusted, as with the
 * dynamic client; two holders of one collection must agree on it. Handlers subscribed by a holder
 * stay subscribed after its release; unsubscribe them first.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import { Informer } from './informer.js'
import type { InformerOptions } from './informer.js'
import type { ListWatchScope, ListWatcher } from './list-watcher.js'
import { WatchListFallbacks } from './watch-list-fallbacks.js'

/** Builds the {@link ListWatcher} of one collection; `dynamicListWatcher` over a client in production. */
export type ListWatcherFactory = (ref: ResourceRef, scope: ListWatchScope) => ListWatcher

/** One holder's share of an informer. */
export interface InformerLease<T extends KubeObject = KubeObject> {
  /** The running, shared informer; do not stop it directly, release the lease. */
  readonly informer: Informer<T>
  /** Drops this hold; the last one stops the informer and resolves once it has stopped. */
  release(): Promise<void>
}

/** The state of one shared informer, for a readiness check. */
export interface SharedInformerStatus {
  /** The collection, as its {@link ListWatcher} describes it. */
  readonly description: string
  /** Whether the first list has been applied. */
  readonly synced: boolean
  /** Milliseconds since the last list or watch event (bookmarks count); undefined before any. */
  readonly lastEventAgeMs: number | undefined
  /** Lists done, the initial one included. */
  readonly relists: number
  /** Watches reopened for a reason other than a normal server timeout. */
  readonly watchRestarts: number
}

interface Entry {
  readonly key: string
  readonly informer: Informer
  holders: number
  /** Set once the informer was stopped, by its last release or by stopAll. */
  stopping: Promise<void> | undefined
}

/** Returns the scope without empty selectors, and without a namespace for a cluster-scoped ref. */
function normalizeScope(ref: ResourceRef, scope: ListWatchScope): ListWatchScope {
  const { namespace, labelSelector, fieldSelector } = scope
  return {
    ...(namespace === undefined || !ref.namespaced ? {} : { namespace }),
    ...(labelSelector === undefined || labelSelector === '' ? {} : { labelSelector }),
    ...(fieldSelector === undefined || fieldSelector === '' ? {} : { fieldSelector }),
  }
}

function collectionKeyOf(ref: ResourceRef, scope: ListWatchScope): string {
  return JSON.stringify([
    ref.group,
    ref.version,
    ref.resource,
    scope.namespace ?? null,
    scope.labelSelector ?? null,
    scope.fieldSelector ?? null,
  ])
}

/** Hands out one reference-counted {@link Informer} per collection. */
export class SharedInformers {
  readonly #factory: ListWatcherFactory
  readonly #options: InformerOptions
  readonly #entries = new Map<string, Entry>()
  /** A server's refusal of streaming lists holds for the resource, whatever the collection. */
  readonly #watchListFallbacks = new WatchListFallbacks()

  /** Creates an empty registry; `options` are given to every informer it starts. */
  constructor(factory: ListWatcherFactory, options: InformerOptions = {}) {
    this.#factory = factory
    this.#options = options
  }

  /** Number of informers held now: started and not yet released by every holder. */
  get size(): number {
    return this.#entries.size
  }

  /**
   * Returns a hold on the informer of this collection, starting it when it is the first hold.
   *
   * @remarks
   * Throws what the factory or the informer's constructor throws; nothing is registered then.
   */
  acquire<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    scope: ListWatchScope = {}
  ): InformerLease<T> {
    const normalized = normalizeScope(ref, scope)
    const key = collectionKeyOf(ref, normalized)
    let entry = this.#entries.get(key)
    if (entry === undefined) {
      const informer = new Informer(this.#factory(ref, normalized), {
        ...this.#options,
        watchListFallback: this.#watchListFallbacks.of(
          `${ref.resource}.${ref.version}.${ref.group}`
        ),
      })
      entry = { key, informer, holders: 0, stopping: undefined }
      this.#entries.set(key, entry)
      informer.start()
    }
    entry.holders++
    const held = entry
    let released: Promise<void> | undefined
    return {
      // The caller names T for the collection, as with the dynamic client.
      informer: held.informer as unknown as Informer<T>,
      release: () => {
        released ??= this.#release(held)
        return released
      },
    }
  }

  /**
   * Stops every informer and forgets them. An outstanding lease's `release()` then only waits for
   * its informer to have stopped; a later acquire starts a fresh informer.
   */
  async stopAll(): Promise<void> {
    const entries = [...this.#entries.values()]
    this.#entries.clear()
    await Promise.all(entries.map((entry) => this.#stop(entry)))
  }

  /** Returns the state of every held informer, sorted by description. */
  status(): SharedInformerStatus[] {
    return [...this.#entries.values()]
      .map(({ informer }) => ({
        description: informer.description,
        synced: informer.hasSynced(),
        lastEventAgeMs: informer.lastEventAgeMs(),
        relists: informer.relists,
        watchRestarts: informer.watchRestarts,
      }))
      .sort((a, b) => (a.description < b.description ? -1 : a.description > b.description ? 1 : 0))
  }

  #release(entry: Entry): Promise<void> {
    if (entry.stopping !== undefined) return entry.stopping
    entry.holders--
    if (entry.holders > 0) return Promise.resolve()
    // Forgotten at once, so that an acquire from now on starts a fresh informer.
    if (this.#entries.get(entry.key) === entry) this.#entries.delete(entry.key)
    return this.#stop(entry)
  }

  #stop(entry: Entry): Promise<void> {
    entry.stopping ??= entry.informer.stop()
    return entry.stopping
  }
}
