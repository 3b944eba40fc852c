/**
 * Builds and starts the hosted controller of one DecoratorController.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { compileAnnotationSelector } from '../../core/annotation-selector.js'
import { compileLabelSelector } from '../../core/label-selector.js'
import { gvkKey } from '../../api/hook-model.js'
import type { DecoratorResourceRule } from '../../api/decorator-controller-spec.js'
import { decoratorFinalizer } from '../../api/decorator-controller-spec.js'
import { ControllerSpecError } from '../../api/controller-spec-error.js'
import { RelatedObjectsManager } from '../customize/related-objects-manager.js'
import type { DecoratorControllerDefinition, EngineContext } from '../engine-context.js'
import { startHostedController } from '../loop/start-hosted-controller.js'
import type { HostedController } from '../loop/start-hosted-controller.js'
import { attachmentRules } from './attachment-rules.js'
import type { AttachmentType } from './attachment-rules.js'
import { decoratorKind } from './decorator-kind.js'
import type { DecoratorController, TargetRule } from './sync-decorator-target.js'
import { messageOf } from '../../core/message-of.js'

/** Compiles a resource rule's label and annotation selectors into one target matcher. */
function targetMatcher(rule: DecoratorResourceRule, index: number): (t: KubeObject) => boolean {
  try {
    const labels = compileLabelSelector(rule.labelSelector)
    const annotations = compileAnnotationSelector(rule.annotationSelector)
    return (target) =>
      labels(target.metadata.labels ?? {}) && annotations(target.metadata.annotations ?? {})
  } catch (error) {
    throw new ControllerSpecError(`spec.resources[${index}]`, messageOf(error))
  }
}

async function resolveTargetRules(
  context: EngineContext,
  definition: DecoratorControllerDefinition
): Promise<TargetRule[]> {
  const { spec, hooks } = definition
  const byGroupKind = new Map<string, TargetRule>()
  for (const [index, rule] of spec.resources.entries()) {
    const info = await context.discovery.resolveResource(rule.apiVersion, rule.resource)
    const related =
      hooks.customize === undefined
        ? undefined
        : new RelatedObjectsManager({
            controller: definition.controller,
            customize: hooks.customize,
            customizeVersion: spec.hooks.customize?.version ?? 'v1',
            parentNamespaced: info.ref.namespaced,
            informers: context.informers,
            discovery: context.discovery,
            log: context.log.child({ controller: definition.name }),
          })
    // Upstream keys its selectors by group and kind: a later rule for the same kind wins.
    byGroupKind.set(`${info.ref.group}/${info.kind}`, {
      info,
      matches: targetMatcher(rule, index),
      ignoreStatusChanges: rule.ignoreStatusChanges,
      related,
    })
  }
  return [...byGroupKind.values()]
}

async function resolveAttachments(
  context: EngineContext,
  definition: DecoratorControllerDefinition
): Promise<AttachmentType[]> {
  const resolved: AttachmentType[] = []
  for (const rule of definition.spec.attachments) {
    const info = await context.discovery.resolveResource(rule.apiVersion, rule.resource)
    const type = gvkKey(info.apiVersion, info.kind)
    // One source per type: a second rule for the same type would watch the same objects.
    if (resolved.some((r) => r.type === type)) continue
    resolved.push({ type, ref: info.ref, updateMethod: rule.updateMethod })
  }
  return resolved
}

/**
 * Resolves a DecoratorController's resources through discovery and starts its hosted controller;
 * resolves once its caches are synced and workers run. Any resource may be a target (no CRD or
 * status subresource is required).
 *
 * @throws UnknownResourceError when a resource is not served (yet).
 */
export async function startDecoratorController(
  context: EngineContext,
  definition: DecoratorControllerDefinition,
  signal?: AbortSignal
): Promise<HostedController> {
  const rules = await resolveTargetRules(context, definition)
  const attachments = await resolveAttachments(context, definition)
  const controller: DecoratorController = {
    name: definition.name,
    object: definition.controller,
    hooks: definition.hooks,
    finalizer: decoratorFinalizer(definition.name),
    finalizerEnabled: definition.finalizerEnabled,
    attachments: attachmentRules(definition.name, attachments),
  }
  const spec = definition.spec
  const kind = decoratorKind({
    controller,
    writes: { client: context.client, applier: context.applier, events: context.events },
    rules,
    // Resyncs longer than the cache flush interval fall back to it, as upstream.
    resyncPeriodMs: Math.min(spec.resyncPeriodMs ?? Infinity, context.cacheFlushIntervalMs),
    events: context.events,
    log: context.log.child({ controller: definition.name }),
    ...(context.onSync === undefined ? {} : { onSync: context.onSync }),
  })
  return startHostedController(context, definition.name, kind, definition.hooks.close, signal)
}
