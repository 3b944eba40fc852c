/**
 * A DecoratorController's sync run offline (`metactl render`): seeds an in-memory cluster with
 * the target and the observed attachments, and runs the engine's pipeline with the decorator
 * strategy (observe, hook, plan, target decoration, attachments), recording what it did.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import { objectKey } from '../core/object-key.js'
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
import { inProcessDecoratorHooks } from '../sdk/in-process.js'
import type { DecoratorHook } from '../sdk/hook-types.js'
import {
  correctGuesses,
  describeObject,
  parentResourceOf,
  resourceOf,
  typeOf,
} from './offline-resource.js'
import type { OfflineInputs, ResolvedRule } from './offline-resource.js'
import type { OfflineHookOptions } from './offline-hooks.js'
import { offlineHooks } from './offline-hooks.js'
import type { OfflineHookKind } from './offline-hooks.js'
import { runOfflineSync } from './run-offline-sync.js'
import { asDeleting, cacheOf, NO_EVENTS, seedCluster } from './seed-cluster.js'
import type { OfflineRun } from './run-offline-sync.js'

/** What a decorator render produced. */
export interface DecoratorRender extends Pick<OfflineRun, 'desired' | 'written' | 'printed'> {
  readonly response: DecoratorSyncResponse
  /** The target as the engine wrote it (as given, when it wrote nothing to it). */
  readonly target: KubeObject
  readonly targetChanged: boolean
}

function decoratorHooks(
  spec: DecoratorControllerSpec,
  answered: (response: DecoratorSyncResponse) => void
): OfflineHookKind<DecoratorSyncRequest, DecoratorSyncResponse> {
  return {
    answered,
    webhooks: (hooks, options) => webhookDecoratorHooks({ ...spec, hooks }, options),
    inProcess: (hook, name) => {
      const call = inProcessDecoratorHooks({ [name]: hook as DecoratorHook })[name]
      if (call === undefined) throw new Error('inProcessDecoratorHooks dropped the hook')
      return call
    },
  }
}

/** Warns when no resource rule's selectors match the target: the engine would not sync it. */
function checkTargetInScope(
  spec: DecoratorControllerSpec,
  target: KubeObject,
  warn: (line: string) => void
): void {
  const matches = spec.resources.some(
    (rule) =>
      rule.apiVersion === target.apiVersion &&
      compileLabelSelector(rule.labelSelector)(target.metadata.labels ?? {}) &&
      compileAnnotationSelector(rule.annotationSelector)(target.metadata.annotations ?? {})
  )
  if (!matches)
    warn(
      "warning: the target matches no resource rule's label and annotation selectors; the " +
        'engine would only call finalize for it, and only while it holds the finalizer'
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
  checkTargetInScope(spec, target, warn)
  const finalizing = opts.finalizing === true
  const hooks = await offlineHooks(
    opts,
    spec.hooks,
    decoratorHooks(spec, (r) => {
      correctGuesses(rules, r.attachments, warn)
    }),
    warn
  )
  const dc = offlineDecorator(object, spec, rules, hooks.hooks, finalizing)
  const info = targetResource(spec, target, crds)
  const seeded = finalizing ? asDeleting(target, dc.finalizer) : target
  const cluster = seedCluster(
    info.ref,
    seeded,
    [...byRule].map(([rule, list]) => [resourceOf(rule).ref, list] as const)
  )
  const rule = { info, matches: () => true, ignoreStatusChanges: false, related: undefined }
  const run = await runOfflineSync({
    cluster,
    parentRef: info.ref,
    parent: seeded,
    hooks,
    noun: 'attachments',
    strategy: (client) => {
      const caches = new Map(rules.map((r) => [typeOf(r), cacheOf(cluster, resourceOf(r).ref)]))
      return decoratorStrategy(dc, { client, events: NO_EVENTS }, rule, caches)
    },
    observed: (_target, observed) => {
      for (const [r, list] of byRule) {
        for (const attachment of list) {
          if (observed.get(typeOf(r))?.has(objectKey(attachment)) === true) continue
          warn(
            `warning: observed ${describeObject(attachment)} is left out: the engine only ` +
              'observes objects the target controls that carry ' +
              `metacontroller.k8s.io/decorator-controller: ${name}`
          )
        }
      }
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
