/**
 * A CompositeController's sync run offline (`metactl render`): seeds an in-memory cluster with
 * the parent, the observed children and ControllerRevisions, and runs the engine's pipeline with
 * the composite strategy (claim, hook, rollout, plan, writes, status), recording what it did.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import type { CompositeControllerSpec } from '../api/composite-controller-spec.js'
import type { CompositeSyncRequest, CompositeSyncResponse } from '../api/hook-model.js'
import { CONTROLLER_REVISIONS } from '../kube/well-known-resources.js'
import { TerminalError } from '../runtime/queue/reconcile-errors.js'
import { decideClaim } from '../engine/children/claim-children.js'
import { compositeFinalizer } from '../engine/composite/composite-kind.js'
import { compositeStrategy, compositeSyncRules } from '../engine/composite/sync-composite-parent.js'
import type {
  CompositeController,
  CompositeObserved,
} from '../engine/composite/sync-composite-parent.js'
import { DEFAULT_REVISION_NAMESPACE } from '../engine/engine-options.js'
import { webhookCompositeHooks } from '../engine/hooks/webhook-hooks.js'
import type { RolloutOutcome } from '../engine/rollout/assemble-rollout.js'
import { OfflineError } from './offline-error.js'
import { parentResourceOf, resourceOf, typeOf } from './offline-resource.js'
import type { OfflineInputs, ResolvedRule } from './offline-resource.js'
import type { OfflineHookOptions } from './offline-hooks.js'
import { prepareOfflineSync, runPreparedSync, warnLeftOut } from './prepare-offline-sync.js'
import { cacheOf, NO_EVENTS } from './seed-cluster.js'
import type { OfflineRun } from './run-offline-sync.js'

/** What a composite render produced. */
export interface CompositeRender extends Pick<OfflineRun, 'desired' | 'written' | 'printed'> {
  readonly response: CompositeSyncResponse
  /** The rollout step's decisions, when a child rule rolls. */
  readonly rollout?: RolloutOutcome
}

/** Why the engine did not claim an observed child. */
function whyLeftOut(
  observed: CompositeObserved,
  parent: KubeObject
): (child: KubeObject) => string {
  return (child) => {
    const decision = decideClaim(child, parent, observed.selector.matches)
    return 'reason' in decision ? decision.reason : 'the engine did not claim it'
  }
}

/** The parent's selector errors, phrased for the command line. */
function selectorError(spec: CompositeControllerSpec): (error: unknown) => never {
  return (error) => {
    if (!(error instanceof TerminalError)) throw error
    const hint = spec.generateSelector ? '' : ' (or set spec.generateSelector on the controller)'
    throw new OfflineError(`--parent: ${error.message}${hint}`)
  }
}

/** The CompositeController as the strategy takes it; its rules' kinds may still be corrected. */
function offlineController(
  object: KubeObject,
  spec: CompositeControllerSpec,
  rules: readonly ResolvedRule[],
  hooks: CompositeController['hooks'],
  finalizing: boolean,
  info: CompositeController['parent'],
  related: CompositeController['related']
): CompositeController {
  return {
    object: { ...object, status: object['status'] ?? {} },
    spec,
    parent: info,
    get children() {
      return rules.map((rule) => ({
        info: resourceOf(rule),
        updateMethod: rule.rule.updateMethod,
        statusChecks: rule.rule.statusChecks,
      }))
    },
    hooks,
    finalizerEnabled: finalizing || spec.hooks.finalize !== undefined,
    finalizer: compositeFinalizer(object.metadata.name ?? ''),
    // A render renders the parent it is given, whatever the controller's label selector says.
    matchesScope: () => true,
    related,
  }
}

/** Runs the engine's composite pipeline for the inputs' parent, over the inputs' objects. */
export async function syncCompositeOffline(
  inputs: OfflineInputs,
  opts: OfflineHookOptions,
  controller: { object: KubeObject; spec: CompositeControllerSpec },
  warn: (line: string) => void
): Promise<CompositeRender> {
  const { spec, object } = controller
  const { parent, crds, rules, byRule, held } = inputs
  const finalizing = opts.finalizing === true
  const info = parentResourceOf(spec.parentResource.resource, parent, crds)
  const finalizer = compositeFinalizer(object.metadata.name ?? '')
  const setup = await prepareOfflineSync<CompositeSyncRequest, CompositeSyncResponse>(
    inputs,
    opts,
    {
      controller,
      webhooks: (hooks, options) => webhookCompositeHooks({ ...spec, hooks }, options),
      desiredOf: (response) => response.children,
      parentRef: info.ref,
      finalizer,
      extraSeeds: [[CONTROLLER_REVISIONS, held]],
    },
    warn
  )
  const { cluster, hooks } = setup
  // Not spread: its children getter reads the rules' kinds as the hook's answer corrects them.
  const cc = offlineController(
    object,
    spec,
    rules,
    hooks.hooks,
    finalizing,
    info,
    setup.related.manager
  )
  const run = await runPreparedSync(setup, {
    parentRef: info.ref,
    noun: 'children',
    strategy: (client) => {
      const caches = {
        children: new Map(
          rules.map((rule) => [typeOf(rule), cacheOf(cluster, resourceOf(rule).ref)])
        ),
        revisions: cacheOf(cluster, CONTROLLER_REVISIONS),
      }
      const writes = { client, events: NO_EVENTS, revisionNamespace: DEFAULT_REVISION_NAMESPACE }
      const strategy = compositeStrategy(cc, writes, caches)
      return { ...strategy, observe: (p, s) => strategy.observe(p, s).catch(selectorError(spec)) }
    },
    observed: (p, observed) => {
      warnLeftOut(byRule, (type) => observed.children.get(type), whyLeftOut(observed, p), warn)
    },
    types: (observed) => compositeSyncRules(cc.children, observed.selector).types,
  })
  return {
    ...run,
    response: run.answer.response,
    ...(run.answer.rollout === undefined ? {} : { rollout: run.answer.rollout }),
  }
}
