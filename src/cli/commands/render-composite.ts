/**
 * `metactl render` for a CompositeController: runs its sync (or finalize) hook offline for a
 * parent and optional observed children, and plans with the engine's selector, claim rules and
 * planner. Observed children are claimed as the engine would claim them (in the parent's
 * namespace, controlled by the parent or orphans, labels matching the selector); the others are
 * left out with a warning.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { CompositeControllerSpec } from '../../api/composite-controller-spec.js'
import type { CompositeSyncRequest, CompositeSyncResponse } from '../../api/hook-model.js'
import { TerminalError } from '../../runtime/reconcile-errors.js'
import { decideClaim } from '../../engine/children/claim-children.js'
import { InvalidDesiredChildError } from '../../engine/children/desired-children.js'
import type { ChildPlan } from '../../engine/children/plan-children.js'
import { compositeSelector } from '../../engine/composite/composite-selector.js'
import type { ParentSelector } from '../../engine/composite/composite-selector.js'
import { compositeWire } from '../../engine/hooks/webhook-hooks.js'
import { planSync } from '../../engine/sync/plan-sync.js'
import type { SyncPlan, SyncRules } from '../../engine/sync/plan-sync.js'
import type { RolloutOutcome } from '../../engine/rollout/assemble-rollout.js'
import { inProcessHooks } from '../../sdk/in-process.js'
import type { CompositeHook } from '../../sdk/hook-types.js'
import { CliError } from '../cli-error.js'
import {
  childTypesOf,
  correctGuesses,
  describeObject,
  isNamespaced,
  messageOf,
  planComments,
  planJson,
  readObjects,
  readParentObject,
  resolveObserved,
  typeOf,
  writtenForm,
  yamlLines,
} from './render-support.js'
import type { RenderOptions, ResolvedRule } from './render-support.js'
import { renderHook } from './render-hook.js'
import type { RenderHookKind } from './render-hook.js'
import {
  isControllerRevision,
  renderRollout,
  rollsChildren,
  rolloutComments,
  rolloutJson,
} from './render-rollout.js'

/** What a composite render produced. */
export interface CompositeRender {
  readonly desired: readonly KubeObject[]
  /** The desired children as the engine leaves them (see render-written.ts). */
  readonly written: readonly KubeObject[]
  /** The plan against no observed children. */
  readonly fresh: ChildPlan
  readonly plan: ChildPlan
  readonly response: CompositeSyncResponse
  /** The rollout step's decisions, when a child rule rolls. */
  readonly rollout?: RolloutOutcome
}

/** The composite kind's hook wire format and in-process adapter, for {@link renderHook}. */
const COMPOSITE_HOOK: RenderHookKind<CompositeSyncRequest, CompositeSyncResponse> = {
  wire: compositeWire,
  inProcess: (hook, name) => {
    const adapted = inProcessHooks({ [name]: hook as CompositeHook })
    const call = adapted[name]
    if (call === undefined) throw new Error('inProcessHooks dropped the hook')
    return call
  },
}

/** Leaves out, with a warning, the observed children the engine would not claim. */
function leaveOutUnclaimed(
  byRule: Iterable<Map<string, KubeObject>>,
  parent: KubeObject,
  selector: ParentSelector,
  warn: (line: string) => void
): void {
  for (const children of byRule) {
    for (const [key, child] of children) {
      const decision = decideClaim(child, parent, selector.matches)
      if (decision.action === 'claim' || decision.action === 'adopt') continue
      warn(`warning: observed ${describeObject(child)} is left out: ${decision.reason}`)
      children.delete(key)
    }
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

/**
 * Renders a CompositeController's hook for a parent: claims the observed children as the engine
 * would, calls the hook, and plans with the engine's own planner.
 */
export async function renderComposite(
  opts: RenderOptions,
  controller: { object: KubeObject; spec: CompositeControllerSpec },
  warn: (line: string) => void
): Promise<CompositeRender> {
  const { spec } = controller
  const parent = readParentObject(opts.parent, [spec.parentResource], warn)
  const allObserved = (opts.observed ?? []).flatMap((file) =>
    readObjects('--observed', file).map((object) => ({ object, file }))
  )
  // ControllerRevisions are the rollout's input, not children.
  const revisions = allObserved.filter((o) => isControllerRevision(o.object)).map((o) => o.object)
  const observedObjects = allObserved.filter((o) => !isControllerRevision(o.object))
  const { rules, byRule } = resolveObserved(
    spec.childResources,
    'childResources',
    parent,
    observedObjects
  )
  const selector = parentSelector(spec, parent)
  leaveOutUnclaimed(byRule.values(), parent, selector, warn)
  const finalizing = opts.finalizing === true
  warnOffline(spec, finalizing, warn)

  const observed = new Map(rules.map((rule) => [typeOf(rule), byRule.get(rule) ?? new Map()]))
  const request = (state: KubeObject): CompositeSyncRequest => ({
    controller: { ...controller.object, status: controller.object['status'] ?? {} },
    parent: state,
    children: observed,
    related: new Map(),
    finalizing,
  })
  const hook = await renderHook(opts, spec.hooks, COMPOSITE_HOOK, warn)
  const invalid = (error: unknown): never => {
    if (error instanceof InvalidDesiredChildError)
      throw new CliError(`${hook.description} returned invalid children: ${error.message}`)
    throw error
  }
  let response: CompositeSyncResponse
  let rollout: RolloutOutcome | undefined
  try {
    response = await hook.call(request(parent))
    correctGuesses(rules, response.children, warn)
    if (rollsChildren(spec)) {
      const childRules = syncRulesOf(rules, selector)
      const input = { spec, parent, selector, rules, observed, revisions, childRules, request }
      rollout = await renderRollout({ ...input, call: (r) => hook.call(r) }).catch(invalid)
      response = rollout.response
    }
  } catch (error) {
    if (error instanceof CliError) throw error
    throw new CliError(`${hook.description} failed: ${messageOf(error)}`)
  } finally {
    await hook.close()
  }
  const syncRules = syncRulesOf(rules, selector)
  let plan: SyncPlan
  try {
    plan = planSync(parent, observed, response.children, syncRules)
  } catch (error) {
    return invalid(error)
  }
  return {
    desired: [...plan.desired.values()].flatMap((children) => [...children.values()]),
    ...writtenForm(plan, syncRules.types, parent),
    plan: plan.children,
    response,
    ...(rollout === undefined ? {} : { rollout }),
  }
}

/** The engine's rules for desired children, from the resolved rules and the selector. */
function syncRulesOf(rules: readonly ResolvedRule[], selector: ParentSelector): SyncRules {
  const types = childTypesOf(rules)
  return {
    types,
    declaredTypes: new Set(types.keys()),
    namespaced: new Map(rules.map((rule) => [typeOf(rule), isNamespaced(rule)])),
    injectLabels: selector.injectLabels,
    matchesSelector: selector.matches,
  }
}

/** The engine's parent selector, with its errors phrased for the command line. */
function parentSelector(spec: CompositeControllerSpec, parent: KubeObject): ParentSelector {
  try {
    return compositeSelector(spec, parent)
  } catch (error) {
    if (!(error instanceof TerminalError)) throw error
    const hint = spec.generateSelector ? '' : ' (or set spec.generateSelector on the controller)'
    throw new CliError(`--parent: ${error.message}${hint}`)
  }
}

/** The YAML output: a valid YAML stream, the plan and status in comments after the children. */
export function formatCompositeText(result: CompositeRender): string[] {
  const lines: string[] = []
  for (const child of result.written) lines.push('---', ...yamlLines(child))
  if (result.written.length === 0) lines.push('# No desired children.')
  const { plan, response } = result
  if (result.rollout !== undefined) lines.push(...rolloutComments(result.rollout))
  lines.push(...planComments(plan))
  const status = response.status
  if (status === null || Object.keys(status).length === 0) {
    lines.push(`# Status: ${status === null ? 'null' : '{}'}`)
  } else {
    lines.push('# Status:', ...yamlLines(status).map((line) => `#   ${line}`))
  }
  lines.push(`# resyncAfterSeconds: ${response.resyncAfterMs / 1000}`)
  lines.push(`# finalized: ${String(response.finalized)}`)
  return lines
}

/** The JSON output: one object. */
export function formatCompositeJson(result: CompositeRender): string {
  const { plan, response } = result
  return JSON.stringify(
    {
      desired: result.desired,
      plan: planJson(plan),
      ...(result.rollout === undefined ? {} : { rollout: rolloutJson(result.rollout) }),
      status: response.status,
      resyncAfterSeconds: response.resyncAfterMs / 1000,
      finalized: response.finalized,
    },
    null,
    2
  )
}
