/**
 * The DecoratorController strategy of the sync pipeline ({@link runSync}, spec §3.14): observes
 * the target's attachments, asks the hook with the related objects, and applies the answer: the
 * target's labels, annotations, status and finalizer, then the attachments.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { objectKey } from '../../core/object-key.js'
import type { SyncHooks } from '../../api/controller-hooks.js'
import type {
  DecoratorSyncRequest,
  DecoratorSyncResponse,
  ObjectsByType,
} from '../../api/hook-model.js'
import type { ObjectClient } from '../../kube/object-client.js'
import type { ResourceInfo } from '../../kube/resource-map.js'
import { Action } from '../../runtime/queue/controller-loop.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import type { ObjectReader } from '../../runtime/informers/object-store.js'
import { NotSyncedError } from '../../runtime/queue/reconcile-errors.js'
import type { ChildApplier } from '../children/child-applier.js'
import { manageChildren } from '../children/manage-children.js'
import type { RelatedObjectsManager } from '../customize/related-objects-manager.js'
import type { EventSink } from '../events/event-recorder.js'
import { shouldManageChildren } from '../sync/finalizer-step.js'
import { planSync } from '../sync/plan-sync.js'
import type { SyncRules } from '../sync/plan-sync.js'
import type { SyncAnswer, SyncOutcome, SyncStrategy } from '../sync/run-sync.js'
import { isAttachmentOf } from './attachment-rules.js'
import { decorateTarget, writeDecoratedTarget } from './decorate-target.js'

/** One resource rule of a DecoratorController, resolved and compiled. */
export interface TargetRule {
  readonly info: ResourceInfo
  /** Tells whether a target matches the rule's label and annotation selectors. */
  readonly matches: (target: KubeObject) => boolean
  readonly ignoreStatusChanges: boolean
  /** Related objects through customize; absent when customize is off. */
  readonly related: RelatedObjectsManager | undefined
}

/** The DecoratorController a strategy syncs for. */
export interface DecoratorController {
  /** The DecoratorController's name, which marks its attachments. */
  readonly name: string
  /** The DecoratorController object sent to hooks as `controller`. */
  readonly object: KubeObject
  readonly hooks: SyncHooks<DecoratorSyncRequest, DecoratorSyncResponse>
  readonly finalizer: string
  readonly finalizerEnabled: boolean
  /** The attachment rules: GVK keys, scopes and update methods. */
  readonly attachments: SyncRules
}

/** Where and how a decorator sync writes. */
export interface DecoratorWrites {
  readonly client: ObjectClient
  /** How desired attachments are written; the dynamic apply when absent. */
  readonly applier?: ChildApplier
  /** Where hook-emitted events go; absent drops them. */
  readonly events?: EventSink
}

/** The attachment caches of a decorator sync, by the GVK key of their rule. */
export type AttachmentCaches = ReadonlyMap<string, ObjectReader>

/**
 * Lists the target's attachments of every rule: objects it controls that carry this
 * DecoratorController's marker annotation, in the target's namespace (anywhere for a
 * cluster-scoped target). A decorator never adopts or releases.
 */
export function observeAttachments(
  name: string,
  types: Iterable<string>,
  target: KubeObject,
  caches: AttachmentCaches
): ObjectsByType {
  const observed = new Map<string, ReadonlyMap<string, KubeObject>>()
  const uid = target.metadata.uid ?? ''
  for (const type of types) {
    const store = caches.get(type)
    if (store === undefined) throw new NotSyncedError(`no cache for attachments ${type}`)
    const owned = store.listByControllerUid(uid).filter((o) => isAttachmentOf(o, target, name))
    observed.set(type, new Map(owned.map((o) => [objectKey(o), o])))
  }
  return observed
}

/**
 * The DecoratorController {@link SyncStrategy} for targets of one resource rule. A decorator
 * with only a finalize hook does nothing for targets that are not being finalized (upstream #948
 * crashes there).
 */
export function decoratorStrategy(
  controller: DecoratorController,
  writes: DecoratorWrites,
  rule: TargetRule,
  caches: AttachmentCaches
): SyncStrategy<
  ObjectsByType,
  DecoratorSyncRequest,
  DecoratorSyncResponse,
  SyncAnswer<DecoratorSyncResponse>
> {
  return {
    finalizer: { client: writes.client, ref: rule.info.ref, finalizer: controller.finalizer },
    finalizerEnabled: controller.finalizerEnabled,
    hooks: controller.hooks,
    events: writes.events,
    matchesScope: rule.matches,
    withoutHook: () => Action.awaitChange(),
    observe: (target) =>
      Promise.resolve(
        observeAttachments(controller.name, controller.attachments.types.keys(), target, caches)
      ),
    ask: async (target, attachments, hook, call, signal) => ({
      response: await call({
        controller: controller.object,
        object: target,
        attachments,
        related: (await rule.related?.relatedObjects(target, signal)) ?? new Map(),
        finalizing: hook === 'finalize',
      }),
    }),
    plan: (target, attachments, { response }) =>
      planSync(target, attachments, response.attachments, controller.attachments),
    apply: (outcome, signal, log) => applyDecorator(controller, writes, rule, outcome, signal, log),
  }
}

/** The writing half: the target's metadata and status, then the attachments. */
async function applyDecorator(
  controller: DecoratorController,
  writes: DecoratorWrites,
  rule: TargetRule,
  outcome: SyncOutcome<ObjectsByType, SyncAnswer<DecoratorSyncResponse>>,
  signal: AbortSignal,
  log: Logger
): Promise<boolean> {
  const { parent: target, answer, plan } = outcome
  const written = await writeDecoratedTarget(
    {
      client: writes.client,
      ref: rule.info.ref,
      hasStatusSubresource: rule.info.subresources.includes('status'),
    },
    decorateTarget(target, answer.response, controller.finalizer),
    signal
  )
  // Gone or changed meanwhile: its next event syncs it again, with attachments untouched.
  if (written === undefined) return false
  if (shouldManageChildren(written, controller.finalizer, controller.finalizerEnabled)) {
    const done = await manageChildren(plan.children, {
      client: writes.client,
      types: controller.attachments.types,
      ...(writes.applier === undefined ? {} : { applier: writes.applier }),
      signal,
      log,
    })
    if (done.created.length + done.updated.length + done.deleted.length > 0)
      log.info('attachments changed', { ...done })
  }
  return true
}
