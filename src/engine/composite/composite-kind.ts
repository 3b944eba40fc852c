/**
 * The CompositeController strategy of the generic parent loop: which parents and children to
 * watch, how events map to parents, and the upstream sync pipeline for one parent (spec §3.5).
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { JsonObject, KubeObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import { compileLabelSelector } from '../../core/label-selector.js'
import { controllerRefOf, groupOf, isDeleting } from '../../core/owner-references.js'
import type { CompositeControllerSpec } from '../../api/composite-controller-spec.js'
import { parseLabelSelector } from '../../api/composite-controller-spec.js'
import { ControllerSpecError } from '../../api/controller-spec-error.js'
import type {
  CompositeSyncRequest,
  CompositeSyncResponse,
  CustomizeRequest,
  CustomizeResponse,
  LabelSelectorSpec,
  ObjectsByType,
} from '../../api/hook-model.js'
import { gvkKey, uniformKey } from '../../api/hook-model.js'
import type { Discovery } from '../../kube/discovery.js'
import { ConflictError, NotFoundError } from '../../kube/api-error.js'
import type { DynamicClient } from '../../kube/dynamic-client.js'
import type { ResourceInfo } from '../../kube/resource-map.js'
import { Action } from '../../runtime/controller-loop.js'
import type { ReconcileContext } from '../../runtime/controller-loop.js'
import type { Logger } from '../../runtime/logger.js'
import { objectKey } from '../../runtime/object-store.js'
import { NotSyncedError, RetryAfterError, TerminalError } from '../../runtime/reconcile-errors.js'
import type { SharedInformers } from '../../runtime/shared-informers.js'
import { claimCandidates, claimChildren } from '../children/claim-children.js'
import { prepareDesiredChildren } from '../children/desired-children.js'
import type { EventSink } from '../events/event-recorder.js'
import { updateLive } from '../children/live-update.js'
import { manageChildren } from '../children/manage-children.js'
import type { ChildType } from '../children/manage-children.js'
import type { ControllerCaches, ControllerKind, WatchSource } from '../loop/parent-controller.js'
import { RelatedObjectsManager } from '../customize/related-objects-manager.js'

/** Calls one hook: a webhook, or a TypeScript function in-process. */
export type HookFunction<Request, Response> = (
  request: Request,
  signal: AbortSignal
) => Promise<Response>

/** The hooks of a CompositeController; absent means not enabled. */
export interface CompositeHooks {
  readonly sync?: HookFunction<CompositeSyncRequest, CompositeSyncResponse>
  readonly finalize?: HookFunction<CompositeSyncRequest, CompositeSyncResponse>
  /**
   * Names the related objects sent to sync and finalize (spec §2.5); its answer is cached per
   * parent UID and generation. Its rules follow `spec.hooks.customize.version` (v1 when absent).
   */
  readonly customize?: HookFunction<CustomizeRequest, CustomizeResponse>
  /** Releases what the hooks hold (pooled connections) when the controller stops. */
  readonly close?: () => Promise<void>
}

/** A child rule resolved through discovery. */
export interface ResolvedChild {
  readonly info: ResourceInfo
  readonly updateMethod: ChildType['updateMethod']
}

/** Everything a composite controller needs, resolved when it is built. */
export interface CompositeKindOptions {
  /** The CompositeController's name. */
  readonly name: string
  /** The CompositeController object sent to hooks as `controller`. */
  readonly controller: KubeObject
  readonly spec: CompositeControllerSpec
  readonly parent: ResourceInfo
  readonly children: readonly ResolvedChild[]
  readonly hooks: CompositeHooks
  /** Whether a finalizer is put on parents (upstream: `hooks.finalize` is present). */
  readonly finalizerEnabled: boolean
  readonly client: DynamicClient
  /** Where related informers come from (customize only). */
  readonly informers: Pick<SharedInformers, 'acquire'>
  /** Resolves the resources related rules name (customize only). */
  readonly discovery: Pick<Discovery, 'resolveResource'>
  readonly events: EventSink
  readonly log: Logger
}

/** The label `generateSelector` injects and selects on. */
export const CONTROLLER_UID_LABEL = 'controller-uid'

/** Returns the finalizer a CompositeController puts on its parents. */
export function compositeFinalizer(name: string): string {
  return `metacontroller.io/compositecontroller-${name}`
}

function hasFinalizer(object: KubeObject, finalizer: string): boolean {
  return object.metadata.finalizers?.includes(finalizer) === true
}

type Matcher = (labels: Readonly<Record<string, string>>) => boolean

function isEmptySelector(selector: LabelSelectorSpec | undefined): boolean {
  return (
    selector === undefined ||
    (Object.keys(selector.matchLabels ?? {}).length === 0 &&
      (selector.matchExpressions ?? []).length === 0)
  )
}

/** Builds a CompositeController's {@link ControllerKind}. */
export function compositeKind(options: CompositeKindOptions): ControllerKind {
  const { spec, client, events, log, parent: parentInfo } = options
  const finalizer = compositeFinalizer(options.name)
  const parentScope = spec.parentResource.labelSelector
  const parentMatcher: Matcher = compileLabelSelector(parentScope)
  const matchesParentScope = (parent: KubeObject): boolean =>
    parentMatcher(parent.metadata.labels ?? {})
  const childTypes = new Map<string, ChildType>()
  const namespacedTypes = new Map<string, boolean>()
  for (const child of options.children) {
    const type = gvkKey(child.info.apiVersion, child.info.kind)
    childTypes.set(type, { ref: child.info.ref, updateMethod: child.updateMethod })
    namespacedTypes.set(type, child.info.ref.namespaced)
  }
  const parentGroup = groupOf(parentInfo.apiVersion)
  const hasStatusSubresource = parentInfo.subresources.includes('status')

  /** The parent's selector: generated from its UID, or `spec.selector`. */
  const selectorOf = (parent: KubeObject): { spec: LabelSelectorSpec; matches: Matcher } => {
    let selector: LabelSelectorSpec | undefined
    if (spec.generateSelector) {
      selector = { matchLabels: { [CONTROLLER_UID_LABEL]: parent.metadata.uid ?? '' } }
    } else {
      const parentSpec = parent['spec']
      try {
        selector = parseLabelSelector(
          isJsonObject(parentSpec) ? parentSpec['selector'] : undefined,
          'spec.selector'
        )
      } catch (error) {
        throw new TerminalError(
          `can't get label selector: ${error instanceof Error ? error.message : String(error)}`
        )
      }
      if (isEmptySelector(selector)) {
        throw new TerminalError(
          '.spec.selector must have either matchLabels, matchExpressions, or both'
        )
      }
    }
    return { spec: selector ?? {}, matches: compileLabelSelector(selector) }
  }

  const parentKey = (parent: KubeObject): string => objectKey(parent)

  const isInScope = (parent: KubeObject): boolean =>
    hasFinalizer(parent, finalizer) || matchesParentScope(parent)

  const parentSources: WatchSource[] = [{ ref: parentInfo.ref }]
  const childSources: WatchSource[] = options.children.map((c) => ({ ref: c.info.ref }))

  const parentsOf = (caches: ControllerCaches) => caches.parents[0]?.store

  const customize = options.hooks.customize
  const related =
    customize === undefined
      ? undefined
      : new RelatedObjectsManager({
          controller: options.controller,
          customize,
          customizeVersion: spec.hooks.customize?.version ?? 'v1',
          parentNamespaced: parentInfo.ref.namespaced,
          informers: options.informers,
          discovery: options.discovery,
          log,
        })

  const kind: ControllerKind = {
    name: `CompositeController-${options.name}`,
    parentSources,
    childSources,
    resyncPeriodMs: spec.resyncPeriodMs,

    parentKeys(parent, old) {
      if (!isInScope(parent)) return []
      if (
        old !== undefined &&
        spec.parentResource.ignoreStatusChanges &&
        old !== parent &&
        old.metadata.generation === parent.metadata.generation &&
        isDeepStrictEqual(old.metadata.labels ?? {}, parent.metadata.labels ?? {}) &&
        isDeepStrictEqual(old.metadata.annotations ?? {}, parent.metadata.annotations ?? {}) &&
        !isDeleting(parent)
      ) {
        return []
      }
      return [parentKey(parent)]
    },

    childKeys(child, change, old, caches) {
      if (change === 'update' && old?.metadata.resourceVersion === child.metadata.resourceVersion)
        return []
      const parents = parentsOf(caches)
      if (parents === undefined) return []
      const ref = controllerRefOf(child)
      if (ref !== undefined) {
        if (ref.kind !== parentInfo.kind || groupOf(ref.apiVersion) !== parentGroup) return []
        const namespace = parentInfo.ref.namespaced ? child.metadata.namespace : undefined
        const key =
          namespace === undefined || namespace === '' ? ref.name : `${namespace}/${ref.name}`
        const parent = parents.get(key)
        if (parent?.metadata.uid !== ref.uid || !isInScope(parent)) return []
        return [key]
      }
      // An orphan may be adopted by any parent whose selector matches it; deletes cannot be.
      if (change === 'delete' || isDeleting(child)) return []
      const namespace = child.metadata.namespace
      const candidates =
        parentInfo.ref.namespaced && namespace !== undefined && namespace !== ''
          ? parents.listByNamespace(namespace)
          : parents.list()
      const keys: string[] = []
      for (const parent of candidates) {
        try {
          if (isInScope(parent) && selectorOf(parent).matches(child.metadata.labels ?? {}))
            keys.push(parentKey(parent))
        } catch {
          // A parent with an invalid selector adopts nothing; its own sync reports why.
        }
      }
      return keys
    },

    allParentKeys(caches) {
      return (parentsOf(caches)?.list() ?? []).filter(isInScope).map(parentKey)
    },

    start(runtime) {
      related?.bind({
        // Only in-scope parents: upstream wakes every cached parent, whose sync then skips it.
        list: () => (parentsOf(runtime.caches)?.list() ?? []).filter(isInScope),
        enqueue: (parent) => {
          runtime.enqueue([parentKey(parent)])
        },
      })
    },

    async stop() {
      await related?.stop()
    },

    async sync(key, context, caches) {
      const cached = parentsOf(caches)?.get(key)
      if (cached === undefined) return Action.awaitChange()
      const parentLog = log.child({ parent: key })
      try {
        return await syncParent(cached, context, caches, parentLog)
      } catch (error) {
        if (!(error instanceof RetryAfterError) && !(error instanceof NotSyncedError)) {
          const message = error instanceof Error ? error.message : String(error)
          events.record(cached, 'Warning', 'SyncError', `Sync error: ${message}`)
          parentLog.warn('sync failed', { error })
        }
        throw error
      }
    },
  }

  async function syncFinalizer(
    parent: KubeObject,
    signal: AbortSignal
  ): Promise<KubeObject | undefined> {
    if (options.finalizerEnabled) {
      if (hasFinalizer(parent, finalizer) || isDeleting(parent)) return parent
      return setFinalizer(parent, true, signal)
    }
    return setFinalizer(parent, false, signal)
  }

  /** Adds or removes our finalizer on the live parent (GET + PUT, UID checked, conflicts retried). */
  async function setFinalizer(
    parent: KubeObject,
    present: boolean,
    signal: AbortSignal
  ): Promise<KubeObject | undefined> {
    if (!present && !hasFinalizer(parent, finalizer)) return parent
    return updateLive(
      client,
      parentInfo.ref,
      parent.metadata.name ?? '',
      (current) => {
        const list = current.metadata.finalizers ?? []
        if (list.includes(finalizer) === present) return undefined
        // A parent already being deleted cannot take a new finalizer.
        if (present && isDeleting(current)) return undefined
        current.metadata.finalizers = present
          ? [...list, finalizer]
          : list.filter((f) => f !== finalizer)
        return current
      },
      { ...namespaceOf(parent), ...uidOf(parent), signal }
    )
  }

  async function syncParent(
    cached: KubeObject,
    context: ReconcileContext,
    caches: ControllerCaches,
    parentLog: Logger
  ): Promise<Action> {
    const { signal } = context
    if (!isInScope(cached)) return Action.awaitChange()
    const parent = await syncFinalizer(cached, signal)
    if (parent === undefined || !isInScope(parent)) return Action.awaitChange()

    const selector = selectorOf(parent)
    const observed = new Map<string, Map<string, KubeObject>>()
    for (const [index, child] of options.children.entries()) {
      const store = caches.children[index]?.store
      if (store === undefined) throw new NotSyncedError(`no cache for ${child.info.ref.resource}`)
      const claimed = await claimChildren(
        {
          client,
          parent,
          parentRef: parentInfo.ref,
          parentApiVersion: parentInfo.apiVersion,
          parentKind: parentInfo.kind,
          matches: selector.matches,
          signal,
        },
        child.info.ref,
        claimCandidates(store, parent)
      )
      observed.set(
        gvkKey(child.info.apiVersion, child.info.kind),
        new Map(claimed.map((o) => [uniformKey(o), o]))
      )
    }

    // Step 6: related objects, before either hook, so finalize sees them too (as upstream).
    const relatedObjects: ObjectsByType =
      related === undefined ? new Map() : await related.relatedObjects(parent, signal)

    const deleting = isDeleting(parent)
    const finalizing =
      options.hooks.finalize !== undefined && (deleting || !matchesParentScope(parent))
    const hook = finalizing ? options.hooks.finalize : options.hooks.sync
    if (hook === undefined) throw new TerminalError('sync hook nil//not defined')
    const request: CompositeSyncRequest = {
      controller: options.controller,
      parent,
      children: observed,
      related: relatedObjects,
      finalizing,
    }
    const started = Date.now()
    const response = await hook(request, signal)
    parentLog.debug('hook called', {
      hook: finalizing ? 'finalize' : 'sync',
      durationMs: Date.now() - started,
      children: response.children.length,
    })

    // Every check runs before any write, so a bad response changes nothing.
    const desired = prepareDesiredChildren(response.children, {
      parent,
      declaredTypes: new Set(childTypes.keys()),
      namespaced: namespacedTypes,
      injectLabels: spec.generateSelector
        ? { [CONTROLLER_UID_LABEL]: parent.metadata.uid ?? '' }
        : {},
      matchesSelector: selector.matches,
    })

    let current: KubeObject = parent
    if (response.finalized) {
      const updated = await setFinalizer(parent, false, signal)
      if (updated === undefined) return Action.awaitChange()
      current = updated
    }
    const shouldFinalize =
      options.hooks.finalize !== undefined &&
      hasFinalizer(parent, finalizer) &&
      !(parent.metadata.finalizers ?? []).some((f) => f === 'foregroundDeletion' || f === 'orphan')
    let manageError: Error | undefined
    if (!deleting || shouldFinalize) {
      try {
        const done = await manageChildren(observed, desired, {
          client,
          parent: current,
          types: childTypes,
          signal,
        })
        if (done.created.length + done.updated.length + done.deleted.length > 0) {
          parentLog.info('children changed', { ...done })
        }
      } catch (error) {
        manageError = error instanceof Error ? error : new Error(String(error))
      }
    }
    await writeStatus(current, response.status, signal)
    if (manageError !== undefined) throw manageError
    return response.resyncAfterMs > 0
      ? Action.requeue(response.resyncAfterMs)
      : Action.awaitChange()
  }

  async function writeStatus(
    parent: KubeObject,
    hookStatus: JsonObject | null,
    signal: AbortSignal
  ): Promise<void> {
    const status: JsonObject = {
      ...(hookStatus ?? {}),
      observedGeneration: parent.metadata.generation ?? 0,
    }
    // Upstream always re-reads the parent before comparing. When the cached copy already has this
    // status there is nothing to write; if the cache were behind, the watch event that brings the
    // newer parent syncs it again. This keeps a converged resync free of API requests.
    if (isDeepStrictEqual(parent['status'], status)) return
    if (hasStatusSubresource) {
      // First try the copy we have: its resourceVersion makes the write conditional, so a parent
      // that changed or was replaced meanwhile answers 409 and takes the re-reading path below.
      // This saves the GET upstream makes before every status write.
      try {
        await client.updateStatus(
          parentInfo.ref,
          { ...parent, status },
          { ...namespaceOf(parent), signal }
        )
        return
      } catch (error) {
        if (error instanceof NotFoundError) return
        if (!(error instanceof ConflictError)) throw error
      }
    }
    try {
      await updateLive(
        client,
        parentInfo.ref,
        parent.metadata.name ?? '',
        (current) => {
          if (isDeepStrictEqual(current['status'], status)) return undefined
          current['status'] = status
          return current
        },
        { ...namespaceOf(parent), ...uidOf(parent), status: hasStatusSubresource, signal }
      )
    } catch (error) {
      // A conflict that outlasted the retries: the next event resyncs (upstream returns success).
      if (error instanceof ConflictError) return
      throw error
    }
  }

  return kind
}

function namespaceOf(object: KubeObject): { namespace?: string } {
  const ns = object.metadata.namespace
  return ns === undefined || ns === '' ? {} : { namespace: ns }
}

function uidOf(object: KubeObject): { uid?: string } {
  return object.metadata.uid === undefined ? {} : { uid: object.metadata.uid }
}

/** Checks a parent resource can be used: upstream requires a CRD with a status subresource. */
export function checkParentResource(parent: ResourceInfo): void {
  if (!parent.subresources.includes('status')) {
    throw new ControllerSpecError(
      'spec.parentResource',
      `${parent.ref.resource}.${parent.ref.group} (${parent.apiVersion}) does not have subresource 'Status' enabled`
    )
  }
}
