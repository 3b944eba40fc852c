/**
 * The customize hook at run time: cached customize answers, related informers acquired on
 * demand, and related-object events turned into parent syncs (upstream `customize.Manager`,
 * spec §2.5).
 *
 * @remarks
 * **Expected flow** A sync calls {@link RelatedObjectsManager.relatedObjects}: the customize
 * answer comes from the cache (per parent UID and generation, 20 minutes) or from the hook; each
 * rule's resource is resolved through discovery and its shared informer acquired the first time a
 * rule names it; until every informer the rules need has synced, the sync fails with a
 * {@link NotSyncedError} (a quiet rate-limited retry, upstream `ErrRelatedInformerNotSynced`).
 * The informers stay held until {@link RelatedObjectsManager.stop}.
 *
 * **Memory** Bounded per controller: one customize answer per live parent (the cache's expiry
 * and size bound, and a prune of deleted parents' answers every cleanup interval), one informer
 * per related resource the rules name, and the calls in flight.
 *
 * **Guarantees**
 * - A related object's add, update (new resourceVersion) or delete enqueues every in-scope parent
 *   whose customize rules select the object, old or new version; the object must be of the
 *   rule's apiVersion and kind.
 * - A parent without a cached answer gets its customize hook called from the event, as upstream
 *   (spec §8 item 33); failures there are logged at debug level and skipped.
 * - Concurrent requests for one parent's answer share one hook call.
 * - A related event walks every in-scope parent's cached answer, as upstream does: O(parents)
 *   per event, with no hook call for a parent whose answer is cached.
 *
 * **Caveats** Namespace label changes do not wake parents selecting by `namespaceSelector`, as
 * upstream (its namespace informer has no handlers); the next sync of the parent sees them.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type {
  CustomizeRequest,
  CustomizeResponse,
  HookVersion,
  ObjectsByType,
  RelatedResourceRule,
} from '../../api/hook-model.js'
import type { Discovery } from '../../kube/discovery.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import type { ResourceInfo } from '../../kube/resource-map.js'
import type { Informer } from '../../runtime/informers/informer.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import { NotSyncedError } from '../../runtime/queue/reconcile-errors.js'
import type { InformerLease, SharedInformers } from '../../runtime/informers/shared-informers.js'
import type { HookFunction } from '../../api/hook-model.js'
import { CUSTOMIZE_CACHE_CLEANUP_MS, CustomizeCache } from './customize-cache.js'
import type { CustomizeCacheOptions } from './customize-cache.js'
import {
  RelatedRuleError,
  matchesRelatedSelection,
  relatedObjectsByType,
  relatedSelection,
  selectsWholeNamespaces,
} from './related-objects.js'
import type { RelatedSelection, SelectedRule } from './related-objects.js'

/** The core v1 Namespace collection, for `namespaceSelector` rules. */
export const NAMESPACES_REF: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'namespaces',
  namespaced: false,
}

/** The parents a manager can wake, given by the controller once it runs. */
export interface RelatedParents {
  /** Returns the parents a related change may concern: the in-scope ones of the parent cache. */
  list(): Iterable<KubeObject>
  /** Enqueues a parent's sync. */
  enqueue(parent: KubeObject): void
}

/** Options of {@link RelatedObjectsManager}. */
export interface RelatedObjectsManagerOptions {
  /** The controller object sent to the hook as `controller`. */
  readonly controller: KubeObject
  readonly customize: HookFunction<CustomizeRequest, CustomizeResponse>
  /** The customize hook's version, which decides the v1 selection restrictions. */
  readonly customizeVersion: HookVersion
  /** Whether the parent resource is namespaced. */
  readonly parentNamespaced: boolean
  readonly informers: Pick<SharedInformers, 'acquire'>
  readonly discovery: Pick<Discovery, 'resolveResource'>
  readonly log: Logger
  /** Overrides the cache expiry and clock, for tests. */
  readonly cache?: CustomizeCacheOptions
}

/** A cached customize answer, with its rules' selections computed once. */
interface CustomizeAnswer {
  readonly response: CustomizeResponse
  /** Selections by rule index, filled as they are first needed. */
  readonly selections: Map<number, RelatedSelection>
}

/** A related informer held by the manager, for one (apiVersion, resource) a rule named. */
interface RelatedInformer {
  /** The rule's apiVersion; the related objects' GVK key uses it. */
  readonly apiVersion: string
  readonly info: ResourceInfo
  readonly lease: InformerLease
  unsubscribe: () => void
}

function ruleKey(rule: Pick<RelatedResourceRule, 'apiVersion' | 'resource'>): string {
  return `${rule.apiVersion}\n${rule.resource}`
}

function parentIdentity(parent: KubeObject): { uid: string; generation: number } {
  return { uid: parent.metadata.uid ?? '', generation: parent.metadata.generation ?? 0 }
}

/** Runs one controller's customize hook and the related informers its rules need. */
export class RelatedObjectsManager {
  readonly #options: RelatedObjectsManagerOptions
  readonly #cache: CustomizeCache<CustomizeAnswer>
  readonly #inflight = new Map<string, Promise<CustomizeAnswer>>()
  readonly #informers = new Map<string, RelatedInformer>()
  readonly #abort = new AbortController()
  #namespaces: InformerLease | undefined
  #parents: RelatedParents | undefined
  #stopped = false
  readonly #now: () => number
  #lastPrune: number

  /** Creates a manager holding nothing yet; informers are acquired by the first syncs. */
  constructor(options: RelatedObjectsManagerOptions) {
    this.#options = options
    this.#cache = new CustomizeCache(options.cache)
    this.#now = options.cache?.now ?? Date.now
    this.#lastPrune = this.#now()
  }

  /** Number of related informers held (the Namespace informer not included). */
  get informerCount(): number {
    return this.#informers.size
  }

  /** Number of customize answers held, expired ones not yet swept included. */
  get cachedAnswers(): number {
    return this.#cache.size
  }

  /** Gives the parents related events may wake; events before this wake nobody. */
  bind(parents: RelatedParents): void {
    this.#parents = parents
  }

  /**
   * Returns the related objects of a parent for its sync request: one entry per rule.
   *
   * @throws NotSyncedError while an informer the rules need has not synced.
   * @throws RelatedRuleError for a rule that cannot be used (spec §2.5).
   * @remarks Also throws what the customize hook and discovery throw.
   */
  async relatedObjects(parent: KubeObject, signal: AbortSignal): Promise<ObjectsByType> {
    this.#pruneDeparted()
    const answer = await this.#answer(parent, signal)
    const selected: SelectedRule[] = []
    const pending: string[] = []
    let namespaces: Informer | undefined
    for (const [index, rule] of answer.response.relatedResources.entries()) {
      const info = await this.#options.discovery.resolveResource(
        rule.apiVersion,
        rule.resource,
        signal
      )
      // The rule is checked before its informer starts, so a bad rule watches nothing.
      const selection = this.#selection(answer, index, parent, info)
      const informer = this.#informerFor(rule, info).lease.informer
      if (!informer.hasSynced()) pending.push(informer.description)
      if (selection.namespaceMatcher !== undefined) {
        namespaces = this.#namespaceInformer()
        if (!namespaces.hasSynced()) pending.push(namespaces.description)
      }
      selected.push({ selection, store: informer.store })
    }
    if (pending.length > 0) {
      throw new NotSyncedError(
        `related informer not synced yet: ${[...new Set(pending)].join(', ')}`
      )
    }
    return relatedObjectsByType(selected, namespaces?.store)
  }

  /** Stops waking parents, aborts customize calls made for events, and releases every informer. */
  async stop(): Promise<void> {
    this.#stopped = true
    this.#parents = undefined
    this.#abort.abort(new Error('controller stopped'))
    const leases: InformerLease[] = []
    for (const entry of this.#informers.values()) {
      entry.unsubscribe()
      leases.push(entry.lease)
    }
    this.#informers.clear()
    if (this.#namespaces !== undefined) leases.push(this.#namespaces)
    this.#namespaces = undefined
    await Promise.all(leases.map((lease) => lease.release()))
  }

  /**
   * Drops the answers of parents no longer in the parent cache (deleted, or out of scope), at
   * most once per cleanup interval: without it, churn would hold answers until they expire.
   */
  #pruneDeparted(): void {
    const parents = this.#parents
    const now = this.#now()
    const interval = this.#options.cache?.cleanupIntervalMs ?? CUSTOMIZE_CACHE_CLEANUP_MS
    if (parents === undefined || now - this.#lastPrune < interval) return
    this.#lastPrune = now
    const live = new Set<string>()
    for (const parent of parents.list()) live.add(parent.metadata.uid ?? '')
    this.#cache.retain((uid) => live.has(uid))
  }

  /** Returns the cached answer for the parent's UID and generation, or asks the hook. */
  #answer(parent: KubeObject, signal: AbortSignal): Promise<CustomizeAnswer> {
    const { uid, generation } = parentIdentity(parent)
    const cached = this.#cache.get(uid, generation)
    if (cached !== undefined) return Promise.resolve(cached)
    const key = `${uid}/${String(generation)}`
    const running = this.#inflight.get(key)
    if (running !== undefined) return running
    const call = this.#callCustomize(parent, signal).finally(() => {
      if (this.#inflight.get(key) === call) this.#inflight.delete(key)
    })
    this.#inflight.set(key, call)
    return call
  }

  async #callCustomize(parent: KubeObject, signal: AbortSignal): Promise<CustomizeAnswer> {
    const { uid, generation } = parentIdentity(parent)
    const response = await this.#options.customize(
      { controller: this.#options.controller, parent },
      signal
    )
    const answer: CustomizeAnswer = { response, selections: new Map() }
    this.#cache.set(uid, generation, answer)
    for (const rule of response.relatedResources) {
      if (selectsWholeNamespaces(rule)) {
        // Upstream warns on every sync; once per answer says the same with less noise.
        this.#options.log.info(
          'related rule uses namespaceSelector without labelSelector: every object of the ' +
            'selected namespaces is sent, which may be expensive',
          { apiVersion: rule.apiVersion, resource: rule.resource }
        )
      }
    }
    return answer
  }

  #selection(
    answer: CustomizeAnswer,
    index: number,
    parent: KubeObject,
    info: ResourceInfo
  ): RelatedSelection {
    const known = answer.selections.get(index)
    if (known !== undefined) return known
    const rule = answer.response.relatedResources[index]
    if (rule === undefined) throw new RelatedRuleError(`no related rule ${String(index)}`)
    const selection = relatedSelection(rule, {
      parent,
      parentNamespaced: this.#options.parentNamespaced,
      customizeVersion: this.#options.customizeVersion,
      resource: { apiVersion: rule.apiVersion, kind: info.kind, namespaced: info.ref.namespaced },
    })
    answer.selections.set(index, selection)
    return selection
  }

  #informerFor(rule: RelatedResourceRule, info: ResourceInfo): RelatedInformer {
    const key = ruleKey(rule)
    const known = this.#informers.get(key)
    if (known !== undefined) return known
    if (this.#stopped) throw new NotSyncedError('the controller is stopping')
    // Cluster-wide, as upstream's related informers: one rule may look in any namespace.
    const lease = this.#options.informers.acquire(info.ref)
    const entry: RelatedInformer = {
      apiVersion: rule.apiVersion,
      info,
      lease,
      unsubscribe: () => undefined,
    }
    this.#informers.set(key, entry)
    // Subscribing replays a synced cache as adds; upstream's replay is a same-resourceVersion
    // update, which its handler ignores, so the replay is skipped here too.
    let live = false
    entry.unsubscribe = lease.informer.subscribe({
      onAdd: (object) => {
        if (live) this.#onRelatedChange(entry, [object])
      },
      onUpdate: (old, object) => {
        if (old.metadata.resourceVersion === object.metadata.resourceVersion) return
        this.#onRelatedChange(entry, [old, object])
      },
      onDelete: (object) => {
        this.#onRelatedChange(entry, [object])
      },
    })
    live = true
    return entry
  }

  #namespaceInformer(): Informer {
    if (this.#namespaces === undefined) {
      if (this.#stopped) throw new NotSyncedError('the controller is stopping')
      // Acquired the first time a rule needs it, not for every controller as upstream.
      this.#namespaces = this.#options.informers.acquire(NAMESPACES_REF)
    }
    return this.#namespaces.informer
  }

  #onRelatedChange(source: RelatedInformer, objects: readonly KubeObject[]): void {
    const parents = this.#parents
    if (parents === undefined || this.#stopped) return
    for (const parent of parents.list()) {
      const { uid, generation } = parentIdentity(parent)
      const cached = this.#cache.get(uid, generation)
      if (cached !== undefined) {
        if (this.#concerns(cached, parent, source, objects)) parents.enqueue(parent)
        continue
      }
      this.#answer(parent, this.#abort.signal).then(
        (answer) => {
          if (!this.#stopped && this.#concerns(answer, parent, source, objects)) {
            this.#parents?.enqueue(parent)
          }
        },
        (error: unknown) => {
          // Skipped, as upstream: the parent's next sync calls customize again and reports.
          this.#options.log.debug('customize failed while matching a related object', {
            parent: parent.metadata.name,
            namespace: parent.metadata.namespace,
            error,
          })
        }
      )
    }
  }

  /** Tells whether any of a parent's rules selects one of the objects (of `source`'s type). */
  #concerns(
    answer: CustomizeAnswer,
    parent: KubeObject,
    source: RelatedInformer,
    objects: readonly KubeObject[]
  ): boolean {
    for (const [index, rule] of answer.response.relatedResources.entries()) {
      // Only the informer a rule's resource resolved to can hold objects of the rule's kind.
      const ruleInformer = this.#informers.get(ruleKey(rule))
      if (
        ruleInformer === undefined ||
        rule.apiVersion !== source.apiVersion ||
        ruleInformer.info.kind !== source.info.kind
      ) {
        continue
      }
      let selection: RelatedSelection
      try {
        selection = this.#selection(answer, index, parent, ruleInformer.info)
      } catch (error) {
        this.#options.log.debug('related rule skipped while matching a related object', { error })
        continue
      }
      const namespaces =
        selection.namespaceMatcher === undefined ? undefined : this.#namespaces?.informer
      if (selection.namespaceMatcher !== undefined && namespaces?.hasSynced() !== true) continue
      if (objects.some((object) => matchesRelatedSelection(selection, object, namespaces?.store))) {
        return true
      }
    }
    return false
  }
}
