/**
 * The DecoratorController pipeline for one target (spec §3.14), composed from the shared sync
 * steps: finalizer → attachments → related objects → hook → plan → target metadata →
 * attachments.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { objectKey } from '../../core/object-key.js'
import { isDeleting } from '../../core/owner-references.js'
import type {
  DecoratorSyncRequest,
  DecoratorSyncResponse,
  HookFunction,
  ObjectsByType,
} from '../../api/hook-model.js'
import type { ObjectClient } from '../../kube/object-client.js'
import type { ResourceInfo } from '../../kube/resource-map.js'
import { Action } from '../../runtime/controller-loop.js'
import type { Logger } from '../../runtime/logger.js'
import { NotSyncedError } from '../../runtime/reconcile-errors.js'
import type { ChildApplier } from '../children/child-applier.js'
import { manageChildren } from '../children/manage-children.js'
import type { RelatedObjectsManager } from '../customize/related-objects-manager.js'
import type { ControllerCaches } from '../loop/parent-controller.js'
import { callHook } from '../sync/call-hook.js'
import type { EventSink } from '../events/event-recorder.js'
import { recordHookEvents } from '../sync/record-hook-events.js'
import { chooseHook } from '../sync/choose-hook.js'
import { hasFinalizer, shouldManageChildren, syncFinalizer } from '../sync/finalizer-step.js'
import { planSync } from '../sync/plan-sync.js'
import type { SyncRules } from '../sync/plan-sync.js'
import { isAttachmentOf } from './attachment-rules.js'
import { decorateTarget, writeDecoratedTarget } from './decorate-target.js'

/** The sync and finalize hooks of a decorator pipeline; absent means not enabled. */
export interface DecoratorSyncHooks {
  readonly sync?: HookFunction<DecoratorSyncRequest, DecoratorSyncResponse>
  readonly finalize?: HookFunction<DecoratorSyncRequest, DecoratorSyncResponse>
}

/** One resource rule of a DecoratorController, resolved and compiled. */
export interface TargetRule {
  readonly info: ResourceInfo
  /** Tells whether a target matches the rule's label and annotation selectors. */
  readonly matches: (target: KubeObject) => boolean
  readonly ignoreStatusChanges: boolean
  /** Related objects through customize; absent when customize is off. */
  readonly related: RelatedObjectsManager | undefined
}

/** Everything the decorator pipeline needs, fixed when the hosted controller is built. */
export interface DecoratorPipeline {
  /** The DecoratorController's name, which marks its attachments. */
  readonly name: string
  /** The DecoratorController object sent to hooks as `controller`. */
  readonly controller: KubeObject
  readonly hooks: DecoratorSyncHooks
  readonly finalizer: string
  readonly finalizerEnabled: boolean
  readonly client: ObjectClient
  /** How desired attachments are written; the dynamic apply when absent. */
  readonly applier?: ChildApplier
  /** The attachment rules: GVK keys, scopes and update methods, in child-source order. */
  readonly attachments: SyncRules
  /** GVK keys of the attachment rules, in child-source order. */
  readonly attachmentTypes: readonly string[]
  /** Where hook-emitted events go; absent drops them. */
  readonly events?: EventSink
}

/**
 * Lists the target's attachments of every rule: objects it controls that carry this
 * DecoratorController's marker annotation, in the target's namespace (anywhere for a
 * cluster-scoped target). A decorator never adopts or releases.
 */
export function observeAttachments(
  pipeline: Pick<DecoratorPipeline, 'name' | 'attachmentTypes'>,
  target: KubeObject,
  caches: { readonly children: readonly Pick<ControllerCaches['children'][number], 'store'>[] }
): ObjectsByType {
  const observed = new Map<string, ReadonlyMap<string, KubeObject>>()
  const uid = target.metadata.uid ?? ''
  for (const [index, type] of pipeline.attachmentTypes.entries()) {
    const store = caches.children[index]?.store
    if (store === undefined) throw new NotSyncedError(`no cache for attachments ${type}`)
    const owned = store
      .listByControllerUid(uid)
      .filter((o) => isAttachmentOf(o, target, pipeline.name))
    observed.set(type, new Map(owned.map((o) => [objectKey(o), o])))
  }
  return observed
}

/**
 * Syncs one target through the decorator pipeline and returns the loop's next action.
 *
 * @remarks
 * A decorator with only a finalize hook does nothing for targets that are not being finalized
 * (upstream #948 crashes there). Every check of the answer runs before the first write.
 */
export async function syncDecoratorTarget(
  pipeline: DecoratorPipeline,
  rule: TargetRule,
  cached: KubeObject,
  caches: ControllerCaches,
  signal: AbortSignal,
  log: Logger
): Promise<Action> {
  const inScope = (t: KubeObject): boolean => hasFinalizer(t, pipeline.finalizer) || rule.matches(t)
  if (!inScope(cached)) return Action.awaitChange()
  const finalizerTarget = {
    client: pipeline.client,
    ref: rule.info.ref,
    finalizer: pipeline.finalizer,
  }
  const target = await syncFinalizer(finalizerTarget, cached, pipeline.finalizerEnabled, signal)
  if (target === undefined || !inScope(target)) return Action.awaitChange()
  const choice = chooseHook({
    syncEnabled: pipeline.hooks.sync !== undefined,
    finalizeEnabled: pipeline.hooks.finalize !== undefined,
    deleting: isDeleting(target),
    inScope: rule.matches(target),
  })
  const hook = choice === 'none' ? undefined : pipeline.hooks[choice]
  if (hook === undefined) return Action.awaitChange()
  const attachments = observeAttachments(pipeline, target, caches)
  const request: DecoratorSyncRequest = {
    controller: pipeline.controller,
    object: target,
    attachments,
    related: (await rule.related?.relatedObjects(target, signal)) ?? new Map(),
    finalizing: choice === 'finalize',
  }
  const response = await callHook(hook, choice, request, signal, log)
  return applyDecoratorAnswer(pipeline, rule, target, attachments, response, signal, log)
}

/** The writing half: plan (every check), target metadata, then the attachments. */
async function applyDecoratorAnswer(
  pipeline: DecoratorPipeline,
  rule: TargetRule,
  target: KubeObject,
  attachments: ObjectsByType,
  response: DecoratorSyncResponse,
  signal: AbortSignal,
  log: Logger
): Promise<Action> {
  const plan = planSync(target, attachments, response.attachments, pipeline.attachments)
  // The response passed every check: the events it asks for are recorded, whatever the writes do.
  recordHookEvents(pipeline.events, target, response.events)
  const written = await writeDecoratedTarget(
    {
      client: pipeline.client,
      ref: rule.info.ref,
      hasStatusSubresource: rule.info.subresources.includes('status'),
    },
    decorateTarget(target, response, pipeline.finalizer),
    signal
  )
  // Gone or changed meanwhile: its next event syncs it again, with attachments untouched.
  if (written === undefined) return Action.awaitChange()
  if (shouldManageChildren(written, pipeline.finalizer, pipeline.finalizerEnabled)) {
    const done = await manageChildren(plan.children, {
      client: pipeline.client,
      types: pipeline.attachments.types,
      ...(pipeline.applier === undefined ? {} : { applier: pipeline.applier }),
      signal,
      log,
    })
    if (done.created.length + done.updated.length + done.deleted.length > 0)
      log.info('attachments changed', { ...done })
  }
  return response.resyncAfterMs > 0 ? Action.requeue(response.resyncAfterMs) : Action.awaitChange()
}
