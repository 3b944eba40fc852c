/**
 * The rollout step's decisions as `metactl render` prints them, for a CompositeController with
 * rolling child rules: the engine's rollout step ran in the render's pipeline, with the
 * ControllerRevisions given with `--observed`.
 *
 * @module
 */
import type { JsonObject, KubeObject } from '../../core/kube-object.js'
import type { RolloutOutcome } from '../../engine/rollout/assemble-rollout.js'
import { CONTROLLER_REVISION_API_VERSION } from '../../engine/rollout/controller-revision.js'
import type { ControllerRevision } from '../../engine/rollout/controller-revision.js'

/** Tells whether an `--observed` object is a ControllerRevision (the rollout's input). */
export function isControllerRevision(object: KubeObject): boolean {
  return (
    object.kind === 'ControllerRevision' && object.apiVersion === CONTROLLER_REVISION_API_VERSION
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
