/**
 * `metactl render` for a DecoratorController: runs its sync (or finalize) hook offline for a
 * target and optional observed attachments, and shows the desired attachments, the plan and what
 * the engine would change on the target (labels, annotations, status, finalizer), with the
 * engine's own attachment rules, planner and target decoration.
 *
 * @module
 */
import type { Agent } from 'undici'
import type { KubeObject } from '../../core/kube-object.js'
import { compileAnnotationSelector } from '../../core/annotation-selector.js'
import { compileLabelSelector } from '../../core/label-selector.js'
import { DEFAULT_WEBHOOK_TIMEOUT_MS } from '../../api/composite-controller-spec.js'
import type { DecoratorControllerSpec } from '../../api/decorator-controller-spec.js'
import { decoratorFinalizer } from '../../api/decorator-controller-spec.js'
import type { DecoratorSyncRequest, DecoratorSyncResponse } from '../../api/hook-model.js'
import { InvalidDesiredChildError } from '../../engine/children/desired-children.js'
import type { ChildPlan } from '../../engine/children/plan-children.js'
import { attachmentRules, isAttachmentOf } from '../../engine/decorator/attachment-rules.js'
import { decorateTarget } from '../../engine/decorator/decorate-target.js'
import { decoratorWire, webhookFunction } from '../../engine/hooks/webhook-hooks.js'
import { planSync } from '../../engine/sync/plan-sync.js'
import type { SyncPlan } from '../../engine/sync/plan-sync.js'
import { inProcessDecoratorHooks } from '../../sdk/in-process.js'
import type { DecoratorHook } from '../../sdk/hook-types.js'
import { CliError } from '../cli-error.js'
import {
  childTypesOf,
  correctGuesses,
  describeObject,
  importHookModule,
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

type DecoratorCall = (request: DecoratorSyncRequest) => Promise<DecoratorSyncResponse>

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

async function decoratorHook(
  opts: RenderOptions,
  spec: DecoratorControllerSpec,
  finalizing: boolean,
  warn: (line: string) => void
): Promise<{ description: string; call: DecoratorCall; close: () => Promise<void> }> {
  const signal = new AbortController().signal
  if (opts.hookModule !== undefined) {
    const { description, hook } = await importHookModule(opts.hookModule, finalizing)
    const typed = hook as DecoratorHook
    const adapted = inProcessDecoratorHooks(finalizing ? { finalize: typed } : { sync: typed })
    const call = finalizing ? adapted.finalize : adapted.sync
    if (call === undefined) throw new Error('inProcessDecoratorHooks dropped the hook')
    return { description, call: (r) => call(r, signal), close: () => Promise.resolve() }
  }
  const url = opts.hookUrl ?? ''
  try {
    new URL(url)
  } catch {
    throw new CliError(`--hook-url: "${url}" is not a valid URL`)
  }
  const hookSpec = (finalizing ? spec.hooks.finalize : undefined) ?? spec.hooks.sync
  const name = finalizing ? 'finalize' : 'sync'
  const agents: Agent[] = []
  const call = webhookFunction(
    {
      url,
      timeoutMs: hookSpec?.webhook?.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
      decodeMode: hookSpec?.webhook?.decodeMode,
    },
    name,
    decoratorWire(hookSpec ?? { version: 'v1', webhook: undefined }, name),
    (warnings) => {
      for (const warning of warnings) warn(`warning: hook response: ${warning}`)
    },
    agents
  )
  return {
    description: `hook ${url} (${hookSpec?.version ?? 'v1'})`,
    call: (r) => call(r, signal),
    close: async () => {
      await Promise.all(agents.map((agent) => agent.close()))
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
  const hook = await decoratorHook(opts, spec, finalizing, warn)
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
