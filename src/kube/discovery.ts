/**
 * API discovery: which groups, versions and resources the API server serves, refreshed
 * periodically and on demand when a kind is not found.
 *
 * @remarks
 * **Guarantees**
 * - Aggregated discovery first: two requests (`GET /api`, `GET /apis` asking for
 *   `APIGroupDiscoveryList` v2, then v2beta1) describe the whole server. A server that answers
 *   with the legacy `APIVersions` / `APIGroupList` instead gets one `APIResourceList` GET per
 *   served group-version.
 * - One unavailable group-version never hides the others: a `Stale` group-version (aggregated)
 *   or a failed GET (legacy, e.g. a 503 from an aggregated APIService that is down) keeps its
 *   data from the previous snapshot (none if there is none, as in client-go), is reported to
 *   `onError`, and the refresh carries on.
 * - Refreshes never overlap, so an older response can never overwrite a newer snapshot.
 * - A miss in {@link Discovery.resolve} first joins a refresh already in flight, so concurrent
 *   misses share one refresh. If that one does not have the kind, the miss is answered by a
 *   refresh that started after the miss, so a CRD that became Established a moment ago is found
 *   rather than failing on a snapshot that predates it.
 * - Rate limit: a refresh caused by a miss starts no sooner than `onDemandMinIntervalMs` (1 s)
 *   after the previous refresh of any kind started, and every miss in that window shares it. A
 *   controller asking for a kind that does not exist therefore causes at most one refresh (two
 *   GETs) per second, however often it asks; the price is that such a miss waits up to that
 *   long before its {@link UnknownResourceError}. (Caching the miss instead would fail at once,
 *   but would also hide a CRD installed right after the cached refresh.)
 * - The periodic loop (upstream Metacontroller's `--discovery-interval`) never throws; its
 *   errors go to `onError`, and its timers do not keep the process alive.
 *
 * @module
 */
import { abortableDelay } from './abortable-delay.js'
import { explainResourceMiss } from './explain-resource-miss.js'
import { fetchResourceMap } from './fetch-resource-map.js'
import type { DiscoveryTransport, FetchResourceMapOptions } from './fetch-resource-map.js'
import { parseApiVersion, ResourceMap } from './resource-map.js'
import type { ResourceInfo } from './resource-map.js'
import { UnknownResourceError } from './unknown-resource-error.js'

/** Receives a new snapshot whose resources differ from the previous one. */
export type ResourceMapListener = (next: ResourceMap, previous: ResourceMap) => void

/** Options of {@link Discovery}. */
export interface DiscoveryOptions {
  /** Time between periodic refreshes after {@link Discovery.start} (30 s, like upstream). */
  readonly refreshIntervalMs?: number
  /**
   * Shortest time between the start of any refresh and one started by a miss (1 s). It bounds
   * the load a controller asking for a kind that does not exist can put on the API server.
   */
  readonly onDemandMinIntervalMs?: number
  /** Monotonic milliseconds; `performance.now()` when absent. */
  readonly clock?: { now(): number }
  /**
   * Receives what a refresh could not do without failing: the group-version (`v1`, `apps/v1`)
   * that is stale or failed, or `''` for a failed periodic refresh or a throwing listener.
   * Nothing is reported when absent; stale group-versions are still visible in
   * {@link ResourceMap.staleGroupVersions} and in {@link UnknownResourceError} messages.
   */
  readonly onError?: (groupVersion: string, error: unknown) => void
  /** Asks for aggregated discovery (true); false forces the legacy per-group-version GETs. */
  readonly aggregated?: boolean
  /** Legacy discovery only: how many group-version GETs run at once (8). */
  readonly concurrency?: number
}

const DEFAULT_REFRESH_INTERVAL_MS = 30_000
const DEFAULT_ON_DEMAND_MIN_INTERVAL_MS = 1_000
const DEFAULT_CONCURRENCY = 8

const defaultClock = {
  now(): number {
    return performance.now()
  },
}

function noop(): void {
  // Deliberately empty: used to mark promises whose rejection is handled elsewhere.
}

// The shared refresh keeps running for the others when one caller gives up waiting.
function withSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise
  if (signal.aborted) return Promise.reject(signal.reason as Error)
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      reject(signal.reason as Error)
    }
    signal.addEventListener('abort', onAbort, { once: true })
    void promise
      .finally(() => {
        signal.removeEventListener('abort', onAbort)
      })
      .then(resolve, reject)
  })
}

/**
 * Discovers the resources an API server serves and keeps the snapshot fresh.
 *
 * @example
 * ```ts
 * const discovery = new Discovery(transport, { onError: (gv, e) => log.warn({ gv, e }) })
 * await discovery.refresh()
 * discovery.start()
 * const { ref, subresources } = await discovery.resolve({ apiVersion: 'apps/v1', kind: 'Deployment' })
 * discovery.stop()
 * ```
 */
export class Discovery {
  readonly #transport: DiscoveryTransport
  readonly #intervalMs: number
  readonly #onDemandMinIntervalMs: number
  readonly #clock: { now(): number }
  readonly #onError: ((groupVersion: string, error: unknown) => void) | undefined
  readonly #fetchOptions: FetchResourceMapOptions
  readonly #listeners = new Set<ResourceMapListener>()
  #current: ResourceMap = ResourceMap.empty
  #inflight: { readonly startedAt: number; readonly promise: Promise<ResourceMap> } | undefined
  #pending: Promise<ResourceMap> | undefined
  #lastStartedAt = -Infinity
  #lastSucceededAt = -Infinity
  #abort = new AbortController()
  #timer: NodeJS.Timeout | undefined
  #running = false
  // Bumped by start and stop, so that a tick of an earlier loop does not re-arm itself.
  #generation = 0

  /** Creates a discovery client; nothing is fetched until a refresh, a resolve or `start()`. */
  constructor(transport: DiscoveryTransport, options: DiscoveryOptions = {}) {
    this.#transport = transport
    this.#intervalMs = options.refreshIntervalMs ?? DEFAULT_REFRESH_INTERVAL_MS
    this.#onDemandMinIntervalMs = options.onDemandMinIntervalMs ?? DEFAULT_ON_DEMAND_MIN_INTERVAL_MS
    this.#clock = options.clock ?? defaultClock
    this.#onError = options.onError
    this.#fetchOptions = {
      aggregated: options.aggregated ?? true,
      concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
      report: (groupVersion, error) => {
        this.#report(groupVersion, error)
      },
    }
  }

  /** Returns the latest snapshot ({@link ResourceMap.empty} before the first refresh). */
  current(): ResourceMap {
    return this.#current
  }

  /**
   * Registers a listener for snapshots whose resources changed (a CRD appeared, changed or went
   * away); returns the function that unregisters it.
   *
   * @remarks
   * Listeners run synchronously after the snapshot is swapped, so `current()` already returns
   * `next`. A freshness change alone does not notify. A listener that throws is reported to
   * `onError` and does not stop the others.
   */
  onChange(listener: ResourceMapListener): () => void {
    // A wrapper per registration, so registering the same function twice needs two unsubscribes.
    const entry: ResourceMapListener = (next, previous) => {
      listener(next, previous)
    }
    this.#listeners.add(entry)
    return () => {
      this.#listeners.delete(entry)
    }
  }

  /**
   * Fetches the whole discovery data now and returns the new snapshot.
   *
   * @remarks
   * Joins a refresh that is already waiting to start; otherwise waits for the running one (which
   * may predate the call) and starts another. `signal` only stops this caller waiting; the
   * shared refresh goes on for the others. Rejects when `/api` or `/apis` cannot be read; the
   * previous snapshot then stays current.
   */
  refresh(signal?: AbortSignal): Promise<ResourceMap> {
    return withSignal(this.#refreshStartingAfter(this.#clock.now(), 0), signal)
  }

  /**
   * Finds the resource that serves a kind, refreshing once on a miss.
   *
   * @throws {@link UnknownResourceError} when the kind is still unknown after a refresh that
   * started after the call.
   */
  async resolve(
    gvk: { readonly apiVersion: string; readonly kind: string },
    signal?: AbortSignal
  ): Promise<ResourceInfo> {
    const target = { apiVersion: gvk.apiVersion, kind: gvk.kind }
    const hit = this.#current.lookup(target)
    if (hit !== undefined) return hit
    if (parseApiVersion(gvk.apiVersion) === undefined) {
      throw new UnknownResourceError(
        target,
        explainResourceMiss(this.#current, gvk.apiVersion, 'kind')
      )
    }
    const { found, snapshot } = await this.#findAfterRefresh((map) => map.lookup(target), signal)
    if (found !== undefined) return found
    throw new UnknownResourceError(target, explainResourceMiss(snapshot, gvk.apiVersion, 'kind'))
  }

  /**
   * Finds a resource (`widgets`) or subresource (`pods/status`) of an `apiVersion`, refreshing
   * once on a miss.
   *
   * @throws {@link UnknownResourceError} when it is still unknown after a refresh that started
   * after the call.
   */
  async resolveResource(
    apiVersion: string,
    resource: string,
    signal?: AbortSignal
  ): Promise<ResourceInfo> {
    const target = { apiVersion, resource }
    const hit = this.#current.lookupResource(apiVersion, resource)
    if (hit !== undefined) return hit
    if (parseApiVersion(apiVersion) === undefined) {
      throw new UnknownResourceError(
        target,
        explainResourceMiss(this.#current, apiVersion, 'resource')
      )
    }
    const { found, snapshot } = await this.#findAfterRefresh(
      (map) => map.lookupResource(apiVersion, resource),
      signal
    )
    if (found !== undefined) return found
    throw new UnknownResourceError(target, explainResourceMiss(snapshot, apiVersion, 'resource'))
  }

  /**
   * Starts refreshing every `refreshIntervalMs`: at once, unless a refresh succeeded less than
   * an interval ago (so `await refresh(); start()` does not fetch twice).
   */
  start(): void {
    if (this.#running) return
    this.#running = true
    const generation = ++this.#generation
    const sinceLast = this.#clock.now() - this.#lastSucceededAt
    this.#arm(generation, Math.max(0, this.#intervalMs - sinceLast))
  }

  /**
   * Stops the periodic refresh and cancels any refresh in flight or waiting; their callers
   * reject with an `AbortError`. Discovery stays usable: a later call refreshes again.
   */
  stop(): void {
    this.#running = false
    this.#generation++
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
    this.#abort.abort()
    this.#abort = new AbortController()
    // The cancelled refreshes can never apply, so a refresh right after stop() need not wait.
    this.#inflight = undefined
    this.#pending = undefined
  }

  #arm(generation: number, delayMs: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      if (generation !== this.#generation) return
      void this.#refreshStartingAfter(this.#clock.now(), 0)
        .then(noop, (error: unknown) => {
          // An abort by stop() is not an error worth reporting.
          if (generation === this.#generation) this.#report('', error)
        })
        .finally(() => {
          if (generation === this.#generation) this.#arm(generation, this.#intervalMs)
        })
    }, delayMs)
    // A periodic refresh is no reason to keep a process alive that has nothing else to do.
    this.#timer.unref()
  }

  // A refresh already in flight usually has what the caller needs, so concurrent misses share
  // it; only if it does not is a refresh that started after the miss awaited (rate-limited).
  async #findAfterRefresh(
    find: (map: ResourceMap) => ResourceInfo | undefined,
    signal: AbortSignal | undefined
  ): Promise<{ readonly found: ResourceInfo | undefined; readonly snapshot: ResourceMap }> {
    const since = this.#clock.now()
    const inflight = this.#inflight
    if (inflight !== undefined && inflight.startedAt < since) {
      const early = await withSignal(
        inflight.promise.catch(() => undefined),
        signal
      )
      const found = early === undefined ? undefined : find(early)
      if (found !== undefined) return { found, snapshot: this.#current }
    }
    const snapshot = await withSignal(
      this.#refreshStartingAfter(since, this.#onDemandMinIntervalMs),
      signal
    )
    return { found: find(snapshot), snapshot }
  }

  // Resolves with the snapshot of a refresh that started at or after `since`. At most one
  // refresh runs and at most one waits; everyone asking in the meantime shares the waiting one.
  #refreshStartingAfter(since: number, minIntervalMs: number): Promise<ResourceMap> {
    const inflight = this.#inflight
    if (inflight !== undefined && inflight.startedAt >= since) return inflight.promise
    if (this.#pending !== undefined) return this.#pending
    const wait = this.#lastStartedAt + minIntervalMs - this.#clock.now()
    if (inflight === undefined && wait <= 0) return this.#startRefresh(this.#abort.signal)
    const pending = this.#scheduleRefresh(minIntervalMs)
    pending.catch(noop)
    this.#pending = pending
    return pending
  }

  async #scheduleRefresh(minIntervalMs: number): Promise<ResourceMap> {
    const signal = this.#abort.signal
    try {
      // Never overlap: the older refresh could finish last and overwrite the newer snapshot.
      // Awaited even when undefined, so `#pending` is assigned before `finally` clears it.
      await this.#inflight?.promise.catch(noop)
      const wait = this.#lastStartedAt + minIntervalMs - this.#clock.now()
      if (wait > 0) await abortableDelay(wait, signal)
      signal.throwIfAborted()
    } finally {
      // After stop() this refresh is no longer the pending one; leave its successor alone.
      if (this.#abort.signal === signal) this.#pending = undefined
    }
    return this.#startRefresh(signal)
  }

  #startRefresh(signal: AbortSignal): Promise<ResourceMap> {
    const startedAt = this.#clock.now()
    this.#lastStartedAt = startedAt
    const promise: Promise<ResourceMap> = fetchResourceMap(
      this.#transport,
      this.#fetchOptions,
      signal,
      this.#current
    )
      .then((next) => {
        // stop() may have come between the last response and here: never apply after it.
        signal.throwIfAborted()
        this.#apply(next)
        return next
      })
      .finally(() => {
        if (this.#inflight?.promise === promise) this.#inflight = undefined
      })
    promise.catch(noop)
    this.#inflight = { startedAt, promise }
    return promise
  }

  #apply(next: ResourceMap): void {
    const previous = this.#current
    this.#current = next
    this.#lastSucceededAt = this.#clock.now()
    if (previous.hasSameResources(next)) return
    for (const listener of [...this.#listeners]) {
      try {
        listener(next, previous)
      } catch (error) {
        this.#report('', error)
      }
    }
  }

  #report(groupVersion: string, error: unknown): void {
    try {
      this.#onError?.(groupVersion, error)
    } catch {
      // A failing reporter must not turn a tolerated problem into a failed refresh.
    }
  }
}
