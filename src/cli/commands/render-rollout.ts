/**
 * `metactl render` for a CompositeController with rolling child rules: the engine's rollout
 * step, offline. ControllerRevisions given with `--observed` are claimed as the engine claims
 * them, the hook is called once per revision, and the engine's planner tells which child this
 * pass would move (or why it waits) and which revisions it would write.
 *
 * @module
 */
import type { JsonObject, KubeObject } from '../../core/kube-object.js'
import { controllerRefOf, groupOf } from '../../core/owner-references.js'
import type { CompositeControllerSpec } from '../../api/composite-controller-spec.js'
import type {
  CompositeSyncRequest,
  CompositeSyncResponse,
  ObjectsByType,
} from '../../api/hook-model.js'
import type { DesiredChildrenRules } from '../../engine/children/desired-children.js'
import { prepareDesiredChildren } from '../../engine/children/desired-children.js'
import type { ParentSelector } from '../../engine/composite/composite-selector.js'
import { DEFAULT_REVISION_NAMESPACE } from '../../engine/engine.js'
import { upToDateTest } from '../../engine/children/child-applier.js'
import { dynamicApplier } from '../../engine/children/dynamic-applier.js'
import { assembleRollout } from '../../engine/rollout/assemble-rollout.js'
import type { RolloutOutcome } from '../../engine/rollout/assemble-rollout.js'
import {
  asControllerRevision,
  CONTROLLER_REVISION_API_VERSION,
  groupKindKey,
  REVISION_API_GROUP_LABEL,
  REVISION_RESOURCE_LABEL,
} from '../../engine/rollout/controller-revision.js'
import type { ControllerRevision } from '../../engine/rollout/controller-revision.js'
import {
  parentRevisions,
  revisionLabels,
  revisionNamespace,
} from '../../engine/rollout/parent-revisions.js'
import type { RolloutChildRule } from '../../engine/rollout/plan-rollout.js'
import { isRollingMethod } from '../../engine/rollout/plan-rollout.js'
import type { ResolvedRule } from './render-support.js'

/** Tells whether an `--observed` object is a ControllerRevision (input to the rollout). */
export function isControllerRevision(object: KubeObject): boolean {
  return (
    object.kind === 'ControllerRevision' && object.apiVersion === CONTROLLER_REVISION_API_VERSION
  )
}

/** Tells whether any child rule of the controller rolls (then render plans a rollout). */
export function rollsChildren(spec: CompositeControllerSpec): boolean {
  return spec.childResources.some((rule) => isRollingMethod(rule.updateMethod))
}

/** What {@link renderRollout} needs from the composite render. */
export interface RolloutRenderInput {
  readonly spec: CompositeControllerSpec
  readonly parent: KubeObject
  readonly selector: ParentSelector
  readonly rules: readonly ResolvedRule[]
  readonly observed: ObjectsByType
  /** The `--observed` ControllerRevisions. */
  readonly revisions: readonly KubeObject[]
  readonly childRules: DesiredChildrenRules
  /** Builds the hook request for one parent state. */
  readonly request: (parent: KubeObject) => CompositeSyncRequest
  readonly call: (request: CompositeSyncRequest) => Promise<CompositeSyncResponse>
}

/**
 * Runs the rollout step offline: claims the revisions (controlled by the parent, or orphans its
 * selector and the parent group and resource labels would adopt), calls the hook per revision,
 * and plans the pass. Its answer replaces the hook's for the rest of the render.
 */
export async function renderRollout(input: RolloutRenderInput): Promise<RolloutOutcome> {
  const { parent, spec } = input
  const parentGroup = groupOf(parent.apiVersion)
  const parentResource = spec.parentResource.resource
  const uid = parent.metadata.uid ?? ''
  const claimed: ControllerRevision[] = input.revisions
    .filter((revision) => {
      const owner = controllerRefOf(revision)
      if (owner !== undefined) return owner.uid === uid
      const labels = revision.metadata.labels ?? {}
      return (
        labels[REVISION_API_GROUP_LABEL] === parentGroup &&
        labels[REVISION_RESOURCE_LABEL] === parentResource &&
        input.selector.matches(labels)
      )
    })
    .map(asControllerRevision)
  const revisions = parentRevisions(parent, claimed, {
    parentResource,
    parentGroup,
    fieldPaths: spec.parentResource.revisionFieldPaths,
    namespace: revisionNamespace(parent, DEFAULT_REVISION_NAMESPACE),
    labels: revisionLabels(parent, {
      selectorLabels: input.selector.spec.matchLabels ?? {},
      useTemplate: !spec.generateSelector,
      parentGroup,
      parentResource,
    }),
  })
  const responses = await Promise.all(
    revisions.map((revision) => input.call(input.request(revision.parent)))
  )
  const answers = revisions.map((revision, index) => {
    const response = responses[index]
    if (response === undefined) throw new Error(`no hook answer for revision ${String(index)}`)
    const desired = prepareDesiredChildren(response.children, { ...input.childRules, parent })
    return { revision, response, desired }
  })
  const rules = new Map<string, RolloutChildRule>(
    input.rules.map((rule) => [
      groupKindKey(groupOf(rule.rule.apiVersion), rule.kind),
      { method: rule.rule.updateMethod, statusChecks: rule.rule.statusChecks },
    ])
  )
  // render shows the dynamic apply's plan, so its up-to-date test is the dynamic apply's.
  return assembleRollout(
    parent,
    answers,
    input.observed,
    rules,
    claimed,
    upToDateTest(dynamicApplier)
  )
}

function revisionLine(revision: ControllerRevision, index: number, isNew: boolean): string {
  const claims = (revision.children ?? []).map((c) => `${c.kind} ${c.names.join(', ')}`).join('; ')
  const role = index === 0 ? `latest${isNew ? ', new' : ''}` : 'older'
  return `#   revision ${revision.metadata.name ?? ''} (${role}): ${claims || 'no children'}`
}

/** The rollout as comments of the YAML output. */
export function rolloutComments(outcome: RolloutOutcome): string[] {
  const { plan, writes } = outcome
  const created = new Set(writes.create.map((r) => r.metadata.name))
  const lines = ['# Rollout:']
  outcome.revisions.forEach((revision, index) => {
    lines.push(revisionLine(revision, index, created.has(revision.metadata.name)))
  })
  if (plan.moved !== undefined) {
    const from = plan.moved.from === undefined ? '' : ` from revision ${plan.moved.from}`
    lines.push(`#   moves ${plan.moved.kind} ${plan.moved.name}${from} to the latest revision`)
  } else if (plan.waiting !== undefined) {
    lines.push(`#   waits (${plan.waiting.reason}): ${plan.waiting.message}`)
  } else {
    lines.push('#   nothing to move: every child is on the latest revision')
  }
  for (const child of plan.adopted)
    lines.push(
      `#   moves ${child.kind} ${child.name} at once (already matches the latest revision)`
    )
  const names = (list: readonly ControllerRevision[]): string =>
    list.map((r) => r.metadata.name ?? '').join(', ') || 'none'
  lines.push(
    `#   revision writes: create ${names(writes.create)}; update ${names(writes.update)}; ` +
      `delete ${names(writes.delete)}`
  )
  return lines
}

/** The rollout as the JSON output prints it. */
export function rolloutJson(outcome: RolloutOutcome): JsonObject {
  const { plan, writes } = outcome
  const names = (list: readonly ControllerRevision[]): string[] =>
    list.map((r) => r.metadata.name ?? '')
  return {
    revisions: outcome.revisions.map((r) => ({ name: r.metadata.name, children: r.children })),
    moved: plan.moved ?? null,
    adopted: plan.adopted,
    waiting: plan.waiting ?? null,
    condition: plan.condition,
    writes: {
      create: names(writes.create),
      update: names(writes.update),
      delete: names(writes.delete),
    },
  }
}
