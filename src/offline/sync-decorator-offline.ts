/**
 * A DecoratorController's sync run offline (`metactl render`): seeds an in-memory cluster with
 * the target and the observed attachments, and runs the engine's pipeline with the decorator
 * strategy (observe, hook, plan, target decoration, attachments), recording what it did.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import { compileAnnotationSelector } from '../core/annotation-selector.js'
import { compileLabelSelector } from '../core/label-selector.js'
import { isResourceOf } from '../api/resource-names.js'
import type { DecoratorControllerSpec } from '../api/decorator-controller-spec.js'
import { decoratorFinalizer } from '../api/decorator-controller-spec.js'
import type { DecoratorSyncRequest, DecoratorSyncResponse } from '../api/hook-model.js'
import type { ResourceInfo } from '../kube/resource-map.js'
import { attachmentRules } from '../engine/decorator/attachment-rules.js'
import { decoratorStrategy } from '../engine/decorator/sync-decorator-target.js'
import type { DecoratorController } from '../engine/decorator/sync-decorator-target.js'
import { webhookDecoratorHooks } from '../engine/hooks/webhook-hooks.js'
import type { RecordedWrite } from '../engine/sync/write-recorder.js'
import { NothingPlannedError } from './offline-error.js'
import { describeObject, parentResourceOf, resourceOf, typeOf } from './offline-resource.js'
import type { OfflineInputs, ResolvedRule } from './offline-resource.js'
import type { OfflineHookOptions } from './offline-hooks.js'
import { prepareOfflineSync, runPreparedSync, warnLeftOut } from './prepare-offline-sync.js'
import { cacheOf, NO_EVENTS } from './seed-cluster.js'
import type { OfflineRun } from './run-offline-sync.js'

/** What a decorator render produced. */
export interface DecoratorRender extends Pick<OfflineRun, 'desired' | 'written' | 'printed'> {
  readonly response: DecoratorSyncResponse
  /** The target as the engine wrote it (as given, when it wrote nothing to it). */
  readonly target: KubeObject
  readonly targetChanged: boolean
}

/** Tells whether a target matches a resource rule's label and annotation selectors, as the engine's rule does. */
function targetMatcher(
  spec: DecoratorControllerSpec,
  info: ResourceInfo
): (t: KubeObject) => boolean {
  const rules = spec.resources
    .filter((rule) => rule.apiVersion === info.apiVersion && rule.resource === info.ref.resource)
    .map((rule) => ({
      labels: compileLabelSelector(rule.labelSelector),
      annotations: compileAnnotationSelector(rule.annotationSelector),
    }))
  return (target) =>
    rules.some(
      (rule) =>
        rule.labels(target.metadata.labels ?? {}) &&
        rule.annotations(target.metadata.annotations ?? {})
    )
}

/**
 * Why the engine would not sync the target: it matches no resource rule's selectors and does not
 * hold the finalizer (the engine then only finalizes it); undefined when it would.
 */
function outOfScope(
  spec: DecoratorControllerSpec,
  info: ResourceInfo,
  target: KubeObject,
  matches: (t: KubeObject) => boolean
): string | undefined {
  if (matches(target)) return undefined
  const selectors = spec.resources
    .filter((rule) => rule.apiVersion === info.apiVersion && rule.resource === info.ref.resource)
    .map((rule) =>
      JSON.stringify({
        ...(rule.labelSelector === undefined ? {} : { labelSelector: rule.labelSelector }),
        ...(rule.annotationSelector === undefined
          ? {}
          : { annotationSelector: rule.annotationSelector }),
      })
    )
  return (
    `the engine does not sync ${describeObject(target)}: its labels and annotations match ` +
    `no resource rule's selectors (${selectors.join('; ')})`
  )
}

/** The resource of the target: its rule's, with the target's kind. */
function targetResource(
  spec: DecoratorControllerSpec,
  target: KubeObject,
  crds: readonly KubeObject[]
): ResourceInfo {
  const sameVersion = spec.resources.filter((r) => r.apiVersion === target.apiVersion)
  const rule = sameVersion.find((r) => isResourceOf(target.kind, r.resource)) ?? sameVersion[0]
  return parentResourceOf(rule?.resource ?? '', target, crds)
}

/** The DecoratorController as the strategy takes it; its rules' kinds may still be corrected. */
function offlineDecorator(
  object: KubeObject,
  spec: DecoratorControllerSpec,
  rules: readonly ResolvedRule[],
  hooks: DecoratorController['hooks'],
  finalizing: boolean
): DecoratorController {
  const name = object.metadata.name ?? ''
  return {
    name,
    object: { ...object, status: object['status'] ?? {} },
    hooks,
    finalizer: decoratorFinalizer(name),
    finalizerEnabled: finalizing || spec.hooks.finalize !== undefined,
    get attachments() {
      const types = rules.map((rule) => ({
        type: typeOf(rule),
        ref: resourceOf(rule).ref,
        updateMethod: rule.rule.updateMethod,
      }))
      return attachmentRules(name, types)
    },
  }
}

/** The first write of the apply step to the target, which sends the whole decorated target. */
function targetWrite(
  writes: readonly RecordedWrite[],
  info: ResourceInfo,
  target: KubeObject
): RecordedWrite | undefined {
  return writes.find(
    (w) =>
      w.error === undefined &&
      w.ref.group === info.ref.group &&
      w.ref.resource === info.ref.resource &&
      w.name === target.metadata.name &&
      (w.namespace ?? '') === (info.ref.namespaced ? (target.metadata.namespace ?? '') : '')
  )
}

/** Runs the engine's decorator pipeline for the inputs' target, over the inputs' objects. */
export async function syncDecoratorOffline(
  inputs: OfflineInputs,
  opts: OfflineHookOptions,
  controller: { object: KubeObject; spec: DecoratorControllerSpec },
  warn: (line: string) => void
): Promise<DecoratorRender> {
  const { spec, object } = controller
  const name = object.metadata.name ?? ''
  const { parent: target, crds, rules, byRule } = inputs
  const finalizing = opts.finalizing === true
  const info = targetResource(spec, target, crds)
  const matches = targetMatcher(spec, info)
  const unselected = outOfScope(spec, info, target, matches)
  // A deleting target that holds the finalizer is finalized whatever its labels say.
  if (unselected !== undefined && !finalizing) throw new NothingPlannedError(unselected)
  const setup = await prepareOfflineSync<DecoratorSyncRequest, DecoratorSyncResponse>(
    inputs,
    opts,
    {
      controller,
      webhooks: (hooks, options) => webhookDecoratorHooks({ ...spec, hooks }, options),
      desiredOf: (response) => response.attachments,
      parentRef: info.ref,
      finalizer: decoratorFinalizer(name),
    },
    warn
  )
  const { cluster, hooks } = setup
  const dc = offlineDecorator(object, spec, rules, hooks.hooks, finalizing)
  const rule = { info, matches, ignoreStatusChanges: false, related: setup.related.manager }
  const run = await runPreparedSync(setup, {
    parentRef: info.ref,
    noun: 'attachments',
    strategy: (client) => {
      const caches = new Map(rules.map((r) => [typeOf(r), cacheOf(cluster, resourceOf(r).ref)]))
      return decoratorStrategy(dc, { client, events: NO_EVENTS }, rule, caches)
    },
    observed: (_target, observed) => {
      warnLeftOut(
        byRule,
        (type) => observed.get(type),
        () =>
          'the engine only observes objects the target controls that carry ' +
          `metacontroller.k8s.io/decorator-controller: ${name}`,
        warn
      )
    },
    types: () => dc.attachments.types,
  })
  const written = targetWrite(run.writes, info, target)
  return {
    ...run,
    response: run.answer.response,
    target: written?.sent ?? run.parent,
    targetChanged: written !== undefined,
  }
}
