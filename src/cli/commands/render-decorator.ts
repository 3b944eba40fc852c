/**
 * `metactl render` for a DecoratorController: runs its sync (or finalize) hook offline for a
 * target and optional observed attachments, and shows the desired attachments, the plan and what
 * the engine would change on the target (labels, annotations, status, finalizer), with the
 * engine's own attachment rules, planner and target decoration.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { compileAnnotationSelector } from '../../core/annotation-selector.js'
import { compileLabelSelector } from '../../core/label-selector.js'
import type { DecoratorControllerSpec } from '../../api/decorator-controller-spec.js'
import { decoratorFinalizer } from '../../api/decorator-controller-spec.js'
import type { DecoratorSyncRequest, DecoratorSyncResponse } from '../../api/hook-model.js'
import { InvalidDesiredChildError } from '../../engine/children/desired-children.js'
import type { ChildPlan } from '../../engine/children/plan-children.js'
import { attachmentRules, isAttachmentOf } from '../../engine/decorator/attachment-rules.js'
import { decorateTarget } from '../../engine/decorator/decorate-target.js'
import { decoratorWire } from '../../engine/hooks/webhook-hooks.js'
import { planSync } from '../../engine/sync/plan-sync.js'
import type { SyncPlan } from '../../engine/sync/plan-sync.js'
import { inProcessDecoratorHooks } from '../../sdk/in-process.js'
import type { DecoratorHook } from '../../sdk/hook-types.js'
import { CliError } from '../cli-error.js'
import {
  childTypesOf,
  correctGuesses,
  describeObject,
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
import type { RenderOptions } from './render-support.js'
import { renderHook } from './render-hook.js'
import type { RenderHookKind } from './render-hook.js'

/** What a decorator render produced. */
export interface DecoratorRender {
  readonly desired: readonly KubeObject[]
  /** The desired attachments as the engine leaves them (see render-written.ts). */
  readonly written: readonly KubeObject[]
  /** The plan against no observed attachments. */
  readonly fresh: ChildPlan
  readonly plan: ChildPlan
  readonly response: DecoratorSyncResponse
  /** The target as the engine would write it. */
  readonly target: KubeObject
  readonly targetChanged: boolean
}

/** The decorator kind's hook wire format and in-process adapter, for {@link renderHook}. */
const DECORATOR_HOOK: RenderHookKind<DecoratorSyncRequest, DecoratorSyncResponse> = {
  wire: decoratorWire,
  inProcess: (hook, name) => {
    const adapted = inProcessDecoratorHooks({ [name]: hook as DecoratorHook })
    const call = adapted[name]
    if (call === undefined) throw new Error('inProcessDecoratorHooks dropped the hook')
    return call
  },
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

/**
 * Renders a DecoratorController's hook for a target: observes the attachments the engine would
 * (controlled by the target, marked with the controller's name), calls the hook, and plans with
 * the engine's planner.
 */
export async function renderDecorator(
  opts: RenderOptions,
  controller: { object: KubeObject; spec: DecoratorControllerSpec },
  warn: (line: string) => void
): Promise<DecoratorRender> {
  const { spec, object } = controller
  const name = object.metadata.name ?? ''
  const target = readParentObject(opts.parent, spec.resources, warn)
  checkTargetInScope(spec, target, warn)
  const observedObjects = (opts.observed ?? []).flatMap((file) =>
    readObjects('--observed', file).map((o) => ({ object: o, file }))
  )
  const { rules, byRule } = resolveObserved(
    spec.attachments,
    'attachments',
    target,
    observedObjects
  )
  for (const attachments of byRule.values()) {
    for (const [key, attachment] of attachments) {
      if (isAttachmentOf(attachment, target, name)) continue
      warn(
        `warning: observed ${describeObject(attachment)} is left out: the engine only observes ` +
          `objects the target controls that carry metacontroller.k8s.io/decorator-controller: ${name}`
      )
      attachments.delete(key)
    }
  }
  const finalizing = opts.finalizing === true
  const observed = new Map(rules.map((rule) => [typeOf(rule), byRule.get(rule) ?? new Map()]))
  const request: DecoratorSyncRequest = {
    controller: { ...object, status: object['status'] ?? {} },
    object: target,
    attachments: observed,
    related: new Map(),
    finalizing,
  }
  const hook = await renderHook(opts, spec.hooks, DECORATOR_HOOK, warn)
  let response: DecoratorSyncResponse
  try {
    response = await hook.call(request)
  } catch (error) {
    throw new CliError(`${hook.description} failed: ${messageOf(error)}`)
  } finally {
    await hook.close()
  }
  correctGuesses(rules, response.attachments, warn)
  const types = childTypesOf(rules)
  let plan: SyncPlan
  try {
    const attachmentTypes = [...types].map(([type, childType]) => ({ type, ...childType }))
    plan = planSync(target, observed, response.attachments, attachmentRules(name, attachmentTypes))
  } catch (error) {
    if (!(error instanceof InvalidDesiredChildError)) throw error
    throw new CliError(`${hook.description} returned invalid attachments: ${error.message}`)
  }
  const decorated = decorateTarget(target, response, decoratorFinalizer(name))
  return {
    desired: [...plan.desired.values()].flatMap((attachments) => [...attachments.values()]),
    ...writtenForm(plan, types, target),
    plan: plan.children,
    response,
    target: decorated.object,
    targetChanged: decorated.metadataChanged || decorated.statusChanged,
  }
}

function changeLines(title: string, changes: Readonly<Record<string, string | null>>): string[] {
  const entries = Object.entries(changes)
  if (entries.length === 0) return []
  return [
    `# ${title}:`,
    ...entries.map(([key, value]) =>
      value === null ? `#   - ${key}` : `#   ${key}: ${JSON.stringify(value)}`
    ),
  ]
}

/** The YAML output: the desired attachments, then the plan and the target's changes. */
export function formatDecoratorText(result: DecoratorRender): string[] {
  const lines: string[] = []
  for (const attachment of result.written) lines.push('---', ...yamlLines(attachment))
  if (result.written.length === 0) lines.push('# No desired attachments.')
  const { response } = result
  lines.push(...planComments(result.plan))
  lines.push(`# Target: ${result.targetChanged ? 'updated' : 'unchanged'}`)
  lines.push(...changeLines('Labels', response.labels))
  lines.push(...changeLines('Annotations', response.annotations))
  if (response.status === null) lines.push('# Status: unchanged (null)')
  else lines.push('# Status:', ...yamlLines(response.status).map((line) => `#   ${line}`))
  lines.push(`# resyncAfterSeconds: ${response.resyncAfterMs / 1000}`)
  lines.push(`# finalized: ${String(response.finalized)}`)
  return lines
}

/** The JSON output: one object. */
export function formatDecoratorJson(result: DecoratorRender): string {
  const { response } = result
  return JSON.stringify(
    {
      desired: result.desired,
      plan: planJson(result.plan),
      target: result.target,
      labels: response.labels,
      annotations: response.annotations,
      status: response.status,
      resyncAfterSeconds: response.resyncAfterMs / 1000,
      finalized: response.finalized,
    },
    null,
    2
  )
}
