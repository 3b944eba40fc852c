/**
 * The CompositeController pipeline for one parent (spec §3.5), composed from the shared sync
 * steps: finalizer → selector → claim → related objects → hook → plan → finalizer removal →
 * children → status.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { isDeleting } from '../../core/owner-references.js'
import { objectKey } from '../../core/object-key.js'
import { equalityTerms } from '../../core/label-selector.js'
import type { CompositeControllerSpec } from '../../api/composite-controller-spec.js'
import type {
  CompositeSyncRequest,
  CompositeSyncResponse,
  HookFunction,
  ObjectsByType,
} from '../../api/hook-model.js'
import { gvkKey } from '../../api/hook-model.js'
import type { ObjectClient } from '../../kube/object-client.js'
import type { ResourceInfo } from '../../kube/resource-map.js'
import { Action } from '../../runtime/controller-loop.js'
import type { Logger } from '../../runtime/logger.js'
import { NotSyncedError, TerminalError } from '../../runtime/reconcile-errors.js'
import { groupOf } from '../../core/owner-references.js'
import { claimCandidates, claimChildren } from '../children/claim-children.js'
import type { ChildApplier } from '../children/child-applier.js'
import { upToDateTest } from '../children/child-applier.js'
import { dynamicApplier } from '../children/dynamic-applier.js'
import { manageChildren } from '../children/manage-children.js'
import type { ChildType } from '../children/plan-children.js'
import type { RelatedObjectsManager } from '../customize/related-objects-manager.js'
import type { EventSink } from '../events/event-recorder.js'
import type { ControllerCaches } from '../loop/parent-controller.js'
import type { RolloutOutcome } from '../rollout/assemble-rollout.js'
import { groupKindKey } from '../rollout/controller-revision.js'
import { revisionLabels, revisionNamespace } from '../rollout/parent-revisions.js'
import type { RevisionSettings } from '../rollout/parent-revisions.js'
import type { RolloutChildRule } from '../rollout/plan-rollout.js'
import { isRollingMethod } from '../rollout/plan-rollout.js'
import { syncRollout, writeRevisions } from '../rollout/sync-rollout.js'
import { callHook } from '../sync/call-hook.js'
import { recordHookEvents } from '../sync/record-hook-events.js'
import { chooseHook } from '../sync/choose-hook.js'
import type { FinalizerTarget } from '../sync/finalizer-step.js'
import { setFinalizer, shouldManageChildren, syncFinalizer } from '../sync/finalizer-step.js'
import { planSync } from '../sync/plan-sync.js'
import type { SyncRules } from '../sync/plan-sync.js'
import { compositeSelector } from './composite-selector.js'
import type { ParentSelector } from './composite-selector.js'
import { compositeStatus, writeCompositeStatus } from './write-composite-status.js'

/** A child rule resolved through discovery. */
export interface ResolvedChild {
  readonly info: ResourceInfo
  readonly updateMethod: ChildType['updateMethod']
  /** `updateStrategy.statusChecks.conditions` (rolling methods only). */
  readonly statusChecks?: RolloutChildRule['statusChecks']
}

/** The sync and finalize hooks of a composite pipeline; absent means not enabled. */
export interface CompositeSyncHooks {
  readonly sync?: HookFunction<CompositeSyncRequest, CompositeSyncResponse>
  readonly finalize?: HookFunction<CompositeSyncRequest, CompositeSyncResponse>
}

/** Everything the composite pipeline needs, fixed when the hosted controller is built. */
export interface CompositePipeline {
  /** The CompositeController object sent to hooks as `controller`. */
  readonly controller: KubeObject
  readonly spec: CompositeControllerSpec
  readonly parent: ResourceInfo
  readonly children: readonly ResolvedChild[]
  readonly hooks: CompositeSyncHooks
  readonly finalizerEnabled: boolean
  readonly finalizer: FinalizerTarget
  readonly client: ObjectClient
  /** How desired children are written; the dynamic apply when absent. */
  readonly applier?: ChildApplier
  /** Related objects through customize; absent when customize is off. */
  readonly related: RelatedObjectsManager | undefined
  /** Tells whether a parent matches `parentResource.labelSelector`. */
  readonly matchesScope: (parent: KubeObject) => boolean
  /** Where hook-emitted events and a rollout's pause are reported. */
  readonly events: EventSink
  /**
   * Where the ControllerRevisions of cluster-scoped parents live (a namespaced parent's live in
   * its own namespace).
   */
  readonly revisionNamespace: string
}

/** Tells whether any child rule uses a rolling update method (then revisions are kept). */
export function usesRollingUpdates(children: readonly ResolvedChild[]): boolean {
  return children.some((child) => isRollingMethod(child.updateMethod))
}

/** The child rules by `Kind.group` key, as the rollout planner reads them (version ignored). */
export function rolloutRules(children: readonly ResolvedChild[]): Map<string, RolloutChildRule> {
  return new Map(
    children.map((child) => [
      groupKindKey(groupOf(child.info.apiVersion), child.info.kind),
      { method: child.updateMethod, statusChecks: child.statusChecks ?? [] },
    ])
  )
}

/** Returns the rules desired children must follow, by parent. */
export function compositeSyncRules(
  children: readonly ResolvedChild[],
  selector: ParentSelector
): SyncRules {
  const types = new Map<string, ChildType>()
  const namespaced = new Map<string, boolean>()
  for (const child of children) {
    const type = gvkKey(child.info.apiVersion, child.info.kind)
    types.set(type, { ref: child.info.ref, updateMethod: child.updateMethod })
    namespaced.set(type, child.info.ref.namespaced)
  }
  return {
    types,
    declaredTypes: new Set(types.keys()),
    namespaced,
    injectLabels: selector.injectLabels,
    matchesSelector: selector.matches,
  }
}

/** Claims the children of every child rule: the observed map the hook receives. */
export async function observeChildren(
  pipeline: CompositePipeline,
  parent: KubeObject,
  selector: ParentSelector,
  caches: ControllerCaches,
  signal: AbortSignal
): Promise<ObjectsByType> {
  const observed = new Map<string, ReadonlyMap<string, KubeObject>>()
  for (const [index, child] of pipeline.children.entries()) {
    const store = caches.children[index]?.store
    if (store === undefined) throw new NotSyncedError(`no cache for ${child.info.ref.resource}`)
    const claimed = await claimChildren(
      {
        client: pipeline.client,
        parent,
        parentRef: pipeline.parent.ref,
        parentApiVersion: pipeline.parent.apiVersion,
        parentKind: pipeline.parent.kind,
        matches: selector.matches,
        signal,
      },
      child.info.ref,
      claimCandidates(store, parent, equalityTerms(selector.spec))
    )
    observed.set(
      gvkKey(child.info.apiVersion, child.info.kind),
      new Map(claimed.map((o) => [objectKey(o), o]))
    )
  }
  return observed
}

/**
 * Syncs one parent through the composite pipeline and returns the loop's next action.
 *
 * @remarks
 * Every check of the hook's answer runs before the first write ({@link planSync}), so a bad
 * answer changes nothing. Whether children are managed is decided on the parent as it is after
 * a `finalized: true` answer removed the finalizer (as upstream).
 */
export async function syncCompositeParent(
  pipeline: CompositePipeline,
  cached: KubeObject,
  caches: ControllerCaches,
  signal: AbortSignal,
  log: Logger
): Promise<Action> {
  const { finalizer } = pipeline
  const inScope = (p: KubeObject): boolean =>
    p.metadata.finalizers?.includes(finalizer.finalizer) === true || pipeline.matchesScope(p)
  if (!inScope(cached)) return Action.awaitChange()
  const parent = await syncFinalizer(finalizer, cached, pipeline.finalizerEnabled, signal)
  if (parent === undefined || !inScope(parent)) return Action.awaitChange()

  const selector = compositeSelector(pipeline.spec, parent)
  const observed = await observeChildren(pipeline, parent, selector, caches, signal)
  // Related objects before either hook, so finalize sees them too (as upstream).
  const related = (await pipeline.related?.relatedObjects(parent, signal)) ?? new Map()
  const choice = chooseHook({
    syncEnabled: pipeline.hooks.sync !== undefined,
    finalizeEnabled: pipeline.hooks.finalize !== undefined,
    deleting: isDeleting(parent),
    inScope: pipeline.matchesScope(parent),
  })
  const hook = choice === 'none' ? undefined : pipeline.hooks[choice]
  if (hook === undefined) throw new TerminalError('sync hook nil//not defined')
  const callFor = async (state: KubeObject): Promise<CompositeSyncResponse> => {
    // A historical parent gets related objects of its own state (the customize cache is shared).
    const forState =
      state === parent
        ? related
        : ((await pipeline.related?.relatedObjects(state, signal)) ?? new Map())
    const request: CompositeSyncRequest = {
      controller: pipeline.controller,
      parent: state,
      children: observed,
      related: forState,
      finalizing: choice === 'finalize',
    }
    return callHook(hook, choice, request, signal, log)
  }
  // Upstream rolls only while children are managed: a deleting parent without our finalizer
  // just gets its status.
  if (
    usesRollingUpdates(pipeline.children) &&
    shouldManageChildren(parent, finalizer.finalizer, pipeline.finalizerEnabled)
  ) {
    const rollout = await rollOut(pipeline, parent, selector, observed, caches, callFor, signal)
    const { response } = rollout
    return applyCompositeAnswer(
      pipeline,
      parent,
      observed,
      selector,
      response,
      signal,
      log,
      rollout
    )
  }
  const response = await callFor(parent)
  return applyCompositeAnswer(pipeline, parent, observed, selector, response, signal, log)
}

/** The rollout step of the composite pipeline: every revision's hook call and the plan. */
async function rollOut(
  pipeline: CompositePipeline,
  parent: KubeObject,
  selector: ParentSelector,
  observed: ObjectsByType,
  caches: ControllerCaches,
  callFor: (state: KubeObject) => Promise<CompositeSyncResponse>,
  signal: AbortSignal
): Promise<RolloutOutcome> {
  // The revision cache is the last child source (see compositeChildSources).
  const revisions = caches.children[pipeline.children.length]?.store
  if (revisions === undefined) throw new NotSyncedError('no cache for controllerrevisions')
  return syncRollout(
    {
      client: pipeline.client,
      parentInfo: pipeline.parent,
      revisions,
      settings: revisionSettings(pipeline, parent, selector),
      matchesSelector: selector.matches,
      childRules: compositeSyncRules(pipeline.children, selector),
      rolloutRules: rolloutRules(pipeline.children),
      isUpToDate: upToDateTest(pipeline.applier ?? dynamicApplier),
      signal,
    },
    parent,
    observed,
    callFor
  )
}

function revisionSettings(
  pipeline: CompositePipeline,
  parent: KubeObject,
  selector: ParentSelector
): RevisionSettings {
  const parentGroup = pipeline.parent.ref.group
  const parentResource = pipeline.parent.ref.resource
  return {
    parentResource,
    parentGroup,
    fieldPaths: pipeline.spec.parentResource.revisionFieldPaths,
    namespace: revisionNamespace(parent, pipeline.revisionNamespace),
    labels: revisionLabels(parent, {
      selectorLabels: selector.spec.matchLabels ?? {},
      useTemplate: !pipeline.spec.generateSelector,
      parentGroup,
      parentResource,
    }),
  }
}

/**
 * The writing half of the pipeline: plans first (every check), then removes the finalizer when
 * the hook says `finalized`, manages the children and writes the status.
 */
async function applyCompositeAnswer(
  pipeline: CompositePipeline,
  parent: KubeObject,
  observed: ObjectsByType,
  selector: ParentSelector,
  response: CompositeSyncResponse,
  signal: AbortSignal,
  log: Logger,
  rollout?: RolloutOutcome
): Promise<Action> {
  const { finalizer } = pipeline
  const rules = compositeSyncRules(pipeline.children, selector)
  const plan = planSync(parent, observed, response.children, rules)
  // The response passed every check: the events it asks for are recorded, whatever the writes do.
  recordHookEvents(pipeline.events, parent, response.events)
  // Revisions record which child belongs to which parent state: written before any child moves.
  if (rollout !== undefined) await recordRollout(pipeline, parent, rollout, signal, log)
  let current: KubeObject = parent
  if (response.finalized) {
    const updated = await setFinalizer(finalizer, parent, false, signal)
    if (updated === undefined) return Action.awaitChange()
    current = updated
  }
  let manageError: Error | undefined
  if (shouldManageChildren(current, finalizer.finalizer, pipeline.finalizerEnabled)) {
    try {
      const done = await manageChildren(plan.children, {
        client: pipeline.client,
        types: rules.types,
        ...(pipeline.applier === undefined ? {} : { applier: pipeline.applier }),
        signal,
      })
      if (done.created.length + done.updated.length + done.deleted.length > 0)
        log.info('children changed', { ...done })
    } catch (error) {
      manageError = error instanceof Error ? error : new Error(String(error))
    }
  }
  await writeCompositeStatus(
    {
      client: pipeline.client,
      ref: pipeline.parent.ref,
      hasStatusSubresource: pipeline.parent.subresources.includes('status'),
    },
    current,
    compositeStatus(current, response.status),
    signal
  )
  if (manageError !== undefined) throw manageError
  return response.resyncAfterMs > 0 ? Action.requeue(response.resyncAfterMs) : Action.awaitChange()
}

/**
 * Writes the rollout's ControllerRevisions and reports a pause on a failing status check with a
 * Warning event (the other waits, such as a recreated child not yet back, are normal progress).
 */
async function recordRollout(
  pipeline: CompositePipeline,
  parent: KubeObject,
  rollout: RolloutOutcome,
  signal: AbortSignal,
  log: Logger
): Promise<void> {
  await writeRevisions(pipeline.client, rollout.writes, signal)
  const { moved, waiting } = rollout.plan
  if (moved !== undefined) log.info('rollout moves a child', { kind: moved.kind, name: moved.name })
  if (waiting?.reason === 'status-check')
    pipeline.events.record(parent, 'Warning', 'RolloutWaiting', waiting.message)
}
