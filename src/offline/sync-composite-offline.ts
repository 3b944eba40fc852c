/**
 * A CompositeController's sync run offline (`metactl render`): seeds an in-memory cluster with
 * the parent, the observed children and ControllerRevisions, and runs the engine's pipeline with
 * the composite strategy (claim, hook, rollout, plan, writes, status), recording what it did.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import { objectKey } from '../core/object-key.js'
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
import { inProcessHooks } from '../sdk/in-process.js'
import type { CompositeHook } from '../sdk/hook-types.js'
import { OfflineError } from './offline-error.js'
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

/** What a composite render produced. */
export interface CompositeRender extends Pick<OfflineRun, 'desired' | 'written' | 'printed'> {
  readonly response: CompositeSyncResponse
  /** The rollout step's decisions, when a child rule rolls. */
  readonly rollout?: RolloutOutcome
}

function compositeHooks(
  spec: CompositeControllerSpec,
  answered: (response: CompositeSyncResponse) => void
): OfflineHookKind<CompositeSyncRequest, CompositeSyncResponse> {
  return {
    answered,
    webhooks: (hooks, options) => webhookCompositeHooks({ ...spec, hooks }, options),
    inProcess: (hook, name) => {
      const call = inProcessHooks({ [name]: hook as CompositeHook })[name]
      if (call === undefined) throw new Error('inProcessHooks dropped the hook')
      return call
    },
  }
}

/** Warns about what an offline render cannot do as the engine would. */
function warnOffline(
  spec: CompositeControllerSpec,
  finalizing: boolean,
  warn: (line: string) => void
): void {
  if (finalizing && spec.hooks.finalize === undefined) {
    warn('warning: the controller has no finalize hook; the engine never sends finalizing: true')
  }
  if (spec.hooks.customize !== undefined) {
    warn('warning: the customize hook is not called offline; related objects are empty')
  }
}

/** Warns about the observed children the engine did not claim, and why. */
function warnLeftOut(
  byRule: ReadonlyMap<ResolvedRule, readonly KubeObject[]>,
  observed: CompositeObserved,
  parent: KubeObject,
  warn: (line: string) => void
): void {
  for (const [rule, children] of byRule) {
    for (const child of children) {
      if (observed.children.get(typeOf(rule))?.has(objectKey(child)) === true) continue
      const decision = decideClaim(child, parent, observed.selector.matches)
      const reason = 'reason' in decision ? decision.reason : 'the engine did not claim it'
      warn(`warning: observed ${describeObject(child)} is left out: ${reason}`)
    }
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
  parent: KubeObject,
  rules: readonly ResolvedRule[],
  hooks: CompositeController['hooks'],
  finalizing: boolean,
  crds: readonly KubeObject[]
): CompositeController {
  return {
    object: { ...object, status: object['status'] ?? {} },
    spec,
    parent: parentResourceOf(spec.parentResource.resource, parent, crds),
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
    related: undefined,
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
  warnOffline(spec, finalizing, warn)
  const hooks = await offlineHooks(
    opts,
    spec.hooks,
    compositeHooks(spec, (r) => {
      correctGuesses(rules, r.children, warn)
    }),
    warn
  )
  const cc = offlineController(object, spec, parent, rules, hooks.hooks, finalizing, crds)
  const seeded = finalizing ? asDeleting(parent, cc.finalizer) : parent
  const cluster = seedCluster(cc.parent.ref, seeded, [
    ...[...byRule].map(([rule, list]) => [resourceOf(rule).ref, list] as const),
    [CONTROLLER_REVISIONS, held],
  ])
  const run = await runOfflineSync({
    cluster,
    parentRef: cc.parent.ref,
    parent: seeded,
    hooks,
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
      warnLeftOut(byRule, observed, p, warn)
    },
    types: (observed) => compositeSyncRules(cc.children, observed.selector).types,
  })
  return {
    ...run,
    response: run.answer.response,
    ...(run.answer.rollout === undefined ? {} : { rollout: run.answer.rollout }),
  }
}
