/**
 * The CompositeController strategy of the sync pipeline ({@link runSync}, spec §3.5): observes
 * the parent's children (selector, claim, related objects), asks the hook (once, or once per
 * revision when a child rule rolls), and applies the answer: revisions, finalizer removal,
 * children, status.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { objectKey } from '../../core/object-key.js'
import { equalityTerms } from '../../core/label-selector.js'
import { groupOf } from '../../core/owner-references.js'
import type { CompositeControllerSpec } from '../../api/composite-controller-spec.js'
import type { SyncHooks } from '../../api/controller-hooks.js'
import type {
  CompositeSyncRequest,
  CompositeSyncResponse,
  ObjectsByType,
} from '../../api/hook-model.js'
import { gvkKey } from '../../api/hook-model.js'
import type { ObjectClient } from '../../kube/object-client.js'
import type { ResourceInfo } from '../../kube/resource-map.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import type { ObjectReader } from '../../runtime/informers/object-store.js'
import { NotSyncedError, TerminalError } from '../../runtime/queue/reconcile-errors.js'
import { claimCandidates, claimChildren } from '../children/claim-children.js'
import type { ChildApplier } from '../children/child-applier.js'
import { upToDateTest } from '../children/child-applier.js'
import { dynamicApplier } from '../children/dynamic-applier.js'
import { manageChildren } from '../children/manage-children.js'
import type { ChildType } from '../children/plan-children.js'
import type { RelatedObjectsManager } from '../customize/related-objects-manager.js'
import type { EventSink } from '../events/event-recorder.js'
import type { RolloutOutcome } from '../rollout/assemble-rollout.js'
import { groupKindKey } from '../rollout/controller-revision.js'
import { revisionLabels, revisionNamespace } from '../rollout/parent-revisions.js'
import type { RevisionSettings } from '../rollout/parent-revisions.js'
import type { RolloutChildRule } from '../rollout/plan-rollout.js'
import { isRollingMethod } from '../rollout/plan-rollout.js'
import { syncRollout, writeRevisions } from '../rollout/sync-rollout.js'
import type { FinalizerTarget } from '../sync/finalizer-step.js'
import { setFinalizer, shouldManageChildren } from '../sync/finalizer-step.js'
import { planSync } from '../sync/plan-sync.js'
import type { SyncPlan, SyncRules } from '../sync/plan-sync.js'
import type { HookCall, SyncOutcome, SyncStrategy } from '../sync/run-sync.js'
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

/** The CompositeController a strategy syncs for: its object, spec and resolved resources. */
export interface CompositeController {
  /** The CompositeController object sent to hooks as `controller`. */
  readonly object: KubeObject
  readonly spec: CompositeControllerSpec
  readonly parent: ResourceInfo
  readonly children: readonly ResolvedChild[]
  readonly hooks: SyncHooks<CompositeSyncRequest, CompositeSyncResponse>
  /** Whether a finalizer is put on parents (upstream: `hooks.finalize` is present). */
  readonly finalizerEnabled: boolean
  /** The finalizer it puts on parents (and removes when it has no finalize hook). */
  readonly finalizer: string
  /** Tells whether a parent matches `parentResource.labelSelector`. */
  readonly matchesScope: (parent: KubeObject) => boolean
  /** Related objects through customize; absent when customize is off. */
  readonly related: RelatedObjectsManager | undefined
}

/** Where and how a composite sync writes. */
export interface CompositeWrites {
  readonly client: ObjectClient
  /** How desired children are written; the dynamic apply when absent. */
  readonly applier?: ChildApplier
  /** Where hook-emitted events and a rollout's pause are reported. */
  readonly events: EventSink
  /**
   * Where the ControllerRevisions of cluster-scoped parents live (a namespaced parent's live in
   * its own namespace).
   */
  readonly revisionNamespace: string
}

/** The caches a composite sync reads, by role. */
export interface CompositeCaches {
  /** The children's caches by GVK key of their rule. */
  readonly children: ReadonlyMap<string, ObjectReader>
  /** The ControllerRevision cache, when a child rule rolls. */
  readonly revisions: ObjectReader | undefined
}

/** What a composite sync observes of a parent. */
export interface CompositeObserved {
  readonly selector: ParentSelector
  /** The claimed children: the `children` of the request. */
  readonly children: ObjectsByType
  /** The related objects (customize) of the parent itself. */
  readonly related: ObjectsByType
}

/** The hook's answer: the response to apply and, when a child rule rolls, the rollout. */
export interface CompositeAnswer {
  readonly response: CompositeSyncResponse
  readonly rollout?: RolloutOutcome
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
  controller: CompositeController,
  client: ObjectClient,
  parent: KubeObject,
  selector: ParentSelector,
  caches: CompositeCaches,
  signal: AbortSignal
): Promise<ObjectsByType> {
  const observed = new Map<string, ReadonlyMap<string, KubeObject>>()
  for (const child of controller.children) {
    const type = gvkKey(child.info.apiVersion, child.info.kind)
    const store = caches.children.get(type)
    if (store === undefined) throw new NotSyncedError(`no cache for ${child.info.ref.resource}`)
    const claimed = await claimChildren(
      {
        client,
        parent,
        parentRef: controller.parent.ref,
        parentApiVersion: controller.parent.apiVersion,
        parentKind: controller.parent.kind,
        matches: selector.matches,
        signal,
      },
      child.info.ref,
      claimCandidates(store, parent, equalityTerms(selector.spec))
    )
    observed.set(type, new Map(claimed.map((o) => [objectKey(o), o])))
  }
  return observed
}

/**
 * The CompositeController {@link SyncStrategy}: every check of the hook's answer runs before the
 * first write, and whether children are managed is decided on the parent as it is after a
 * `finalized: true` answer removed the finalizer (as upstream).
 */
export function compositeStrategy(
  controller: CompositeController,
  writes: CompositeWrites,
  caches: CompositeCaches
): SyncStrategy<CompositeObserved, CompositeSyncRequest, CompositeSyncResponse, CompositeAnswer> {
  const finalizer: FinalizerTarget = {
    client: writes.client,
    ref: controller.parent.ref,
    finalizer: controller.finalizer,
  }
  return {
    finalizer,
    finalizerEnabled: controller.finalizerEnabled,
    hooks: controller.hooks,
    events: writes.events,
    matchesScope: controller.matchesScope,
    withoutHook: () => {
      // A controller without a sync hook has nothing to do for a parent that is not finalizing.
      throw new TerminalError('the CompositeController has no sync hook: set spec.hooks.sync')
    },
    observe: async (parent, signal) => {
      const selector = compositeSelector(controller.spec, parent)
      const children = await observeChildren(
        controller,
        writes.client,
        parent,
        selector,
        caches,
        signal
      )
      // Related objects before either hook, so finalize sees them too (as upstream).
      const related = (await controller.related?.relatedObjects(parent, signal)) ?? new Map()
      return { selector, children, related }
    },
    ask: (parent, observed, hook, call, signal) =>
      askComposite(controller, writes, caches, { parent, observed, hook, call, signal }),
    plan: (parent, observed, answer) =>
      planSync(
        parent,
        observed.children,
        answer.response.children,
        compositeSyncRules(controller.children, observed.selector)
      ),
    apply: (outcome, signal, log) => applyComposite(controller, writes, outcome, signal, log),
  }
}

/** One composite hook question: the parent, what was observed, and how to call the hook. */
interface CompositeQuestion {
  readonly parent: KubeObject
  readonly observed: CompositeObserved
  readonly hook: 'sync' | 'finalize'
  readonly call: HookCall<CompositeSyncRequest, CompositeSyncResponse>
  readonly signal: AbortSignal
}

/**
 * Asks the hook: once for the parent, or, when a child rule rolls and children are managed, once
 * per revision through the rollout step (upstream rolls only while children are managed: a
 * deleting parent without our finalizer just gets its status).
 */
async function askComposite(
  controller: CompositeController,
  writes: CompositeWrites,
  caches: CompositeCaches,
  question: CompositeQuestion
): Promise<CompositeAnswer> {
  const { parent, observed, signal } = question
  const callFor = async (state: KubeObject): Promise<CompositeSyncResponse> => {
    // A historical parent gets related objects of its own state (the customize cache is shared).
    const related =
      state === parent
        ? observed.related
        : ((await controller.related?.relatedObjects(state, signal)) ?? new Map())
    return question.call({
      controller: controller.object,
      parent: state,
      children: observed.children,
      related,
      finalizing: question.hook === 'finalize',
    })
  }
  const rolls =
    usesRollingUpdates(controller.children) &&
    shouldManageChildren(parent, controller.finalizer, controller.finalizerEnabled)
  if (!rolls) return { response: await callFor(parent) }
  if (caches.revisions === undefined) throw new NotSyncedError('no cache for controllerrevisions')
  const rollout = await syncRollout(
    {
      client: writes.client,
      parentInfo: controller.parent,
      revisions: caches.revisions,
      settings: revisionSettings(controller, writes, parent, observed.selector),
      matchesSelector: observed.selector.matches,
      childRules: compositeSyncRules(controller.children, observed.selector),
      rolloutRules: rolloutRules(controller.children),
      isUpToDate: upToDateTest(writes.applier ?? dynamicApplier),
      signal,
    },
    parent,
    observed.children,
    callFor
  )
  return { response: rollout.response, rollout }
}

/**
 * The writing half: the rollout's revisions, the finalizer removal when the hook says
 * `finalized`, the children, then the status (also when managing the children failed).
 */
async function applyComposite(
  controller: CompositeController,
  writes: CompositeWrites,
  outcome: SyncOutcome<CompositeObserved, CompositeAnswer>,
  signal: AbortSignal,
  log: Logger
): Promise<boolean> {
  const { parent, answer, plan } = outcome
  const { response, rollout } = answer
  // Revisions record which child belongs to which parent state: written before any child moves.
  if (rollout !== undefined) await recordRollout(writes, parent, rollout, signal, log)
  let current: KubeObject = parent
  if (response.finalized) {
    const finalizer = {
      client: writes.client,
      ref: controller.parent.ref,
      finalizer: controller.finalizer,
    }
    const updated = await setFinalizer(finalizer, parent, false, signal)
    if (updated === undefined) return false
    current = updated
  }
  let manageError: Error | undefined
  if (shouldManageChildren(current, controller.finalizer, controller.finalizerEnabled)) {
    try {
      await manageComposite(controller, writes, outcome.observed, plan, signal, log)
    } catch (error) {
      manageError = error instanceof Error ? error : new Error(String(error))
    }
  }
  await writeCompositeStatus(
    {
      client: writes.client,
      ref: controller.parent.ref,
      hasStatusSubresource: controller.parent.subresources.includes('status'),
    },
    current,
    compositeStatus(current, response.status),
    signal
  )
  if (manageError !== undefined) throw manageError
  return true
}

async function manageComposite(
  controller: CompositeController,
  writes: CompositeWrites,
  observed: CompositeObserved,
  plan: SyncPlan,
  signal: AbortSignal,
  log: Logger
): Promise<void> {
  const done = await manageChildren(plan.children, {
    client: writes.client,
    types: compositeSyncRules(controller.children, observed.selector).types,
    ...(writes.applier === undefined ? {} : { applier: writes.applier }),
    signal,
    log,
  })
  if (done.created.length + done.updated.length + done.deleted.length > 0)
    log.info('children changed', { ...done })
}

function revisionSettings(
  controller: CompositeController,
  writes: CompositeWrites,
  parent: KubeObject,
  selector: ParentSelector
): RevisionSettings {
  const { spec } = controller
  const parentGroup = controller.parent.ref.group
  const parentResource = controller.parent.ref.resource
  return {
    parentResource,
    parentGroup,
    fieldPaths: spec.parentResource.revisionFieldPaths,
    namespace: revisionNamespace(parent, writes.revisionNamespace),
    labels: revisionLabels(parent, {
      selectorLabels: selector.spec.matchLabels ?? {},
      useTemplate: !spec.generateSelector,
      parentGroup,
      parentResource,
    }),
  }
}

/**
 * Writes the rollout's ControllerRevisions and reports a pause on a failing status check with a
 * Warning event (the other waits, such as a recreated child not yet back, are normal progress).
 */
async function recordRollout(
  writes: CompositeWrites,
  parent: KubeObject,
  rollout: RolloutOutcome,
  signal: AbortSignal,
  log: Logger
): Promise<void> {
  await writeRevisions(writes.client, rollout.writes, signal)
  const { moved, waiting } = rollout.plan
  if (moved !== undefined) log.info('rollout moves a child', { kind: moved.kind, name: moved.name })
  if (waiting?.reason === 'status-check')
    writes.events.record(parent, 'Warning', 'RolloutWaiting', waiting.message)
}
