/**
 * Turns the hook answers of every revision into one answer (spec §3.11 steps 5 to 9): plans the
 * rollout pass, prunes revisions left without children, decides the ControllerRevision writes,
 * and builds the desired children, each child at the revision that claims it. Pure.
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { KubeObject } from '../../core/kube-object.js'
import { groupOf } from '../../core/owner-references.js'
import type { CompositeSyncResponse, ObjectsByType } from '../../api/hook-model.js'
import type { ControllerRevision } from './controller-revision.js'
import { countClaims, groupKindKey } from './controller-revision.js'
import type { ParentRevision } from './parent-revisions.js'
import type {
  ChildUpToDate,
  RelativeObjects,
  RolloutChildRef,
  RolloutChildRule,
  RolloutPlan,
} from './plan-rollout.js'
import { planRollout } from './plan-rollout.js'
import { setStatusCondition } from './status-condition.js'

/** A revision and its hook's answer. */
export interface RevisionAnswer {
  readonly revision: ParentRevision
  readonly response: CompositeSyncResponse
  /** The answer's children after the engine's checks and defaulting (by GVK and uniform key). */
  readonly desired: ObjectsByType
}

/** The ControllerRevision writes of one sync, run before any child is touched. */
export interface RevisionWrites {
  readonly create: readonly ControllerRevision[]
  readonly update: readonly ControllerRevision[]
  /** Observed revisions no longer wanted (their UID is the delete precondition). */
  readonly delete: readonly ControllerRevision[]
}

/** What {@link assembleRollout} decided. */
export interface RolloutOutcome {
  /** One answer: the children at their revisions, the latest status with `Updated`. */
  readonly response: CompositeSyncResponse
  readonly plan: RolloutPlan
  /** The revisions kept, the latest first, with their new claims. */
  readonly revisions: readonly ControllerRevision[]
  readonly writes: RevisionWrites
}

/**
 * Returns a child's relative name: its name, or `namespace/name` for a namespaced child of a
 * cluster-scoped parent (upstream's RelativeObjectMap key, which revisions record).
 */
export function relativeName(parentNamespace: string, child: KubeObject): string {
  const namespace = child.metadata.namespace ?? ''
  const name = child.metadata.name ?? ''
  return parentNamespace === '' && namespace !== '' ? `${namespace}/${name}` : name
}

/** Re-keys objects from GVK and uniform key to `Kind.group` and relative name. */
export function byRelativeName(parentNamespace: string, objects: ObjectsByType): RelativeObjects {
  const out = new Map<string, Map<string, KubeObject>>()
  for (const children of objects.values()) {
    for (const child of children.values()) {
      const key = groupKindKey(groupOf(child.apiVersion), child.kind)
      const bucket = out.get(key) ?? new Map<string, KubeObject>()
      out.set(key, bucket)
      bucket.set(relativeName(parentNamespace, child), child)
    }
  }
  return out
}

function refOf(parentNamespace: string, child: KubeObject): RolloutChildRef {
  return {
    apiGroup: groupOf(child.apiVersion),
    kind: child.kind,
    name: relativeName(parentNamespace, child),
  }
}

/**
 * Plans one rollout pass over the answers of every revision (the latest first) and assembles
 * the answer the rest of the sync acts on.
 *
 * @remarks
 * The desired children are the latest answer's, in its order, except that a child an older
 * revision still claims is that revision's version of it. Status comes from the latest answer
 * only, with the `Updated` condition merged in (a `null` status starts empty: upstream panics).
 * `resyncAfterSeconds` is the smallest positive one of all answers; `finalized` holds when every
 * answer says so. Revisions other than the latest that claim nothing are pruned.
 */
export function assembleRollout(
  parent: KubeObject,
  answers: readonly RevisionAnswer[],
  observed: ObjectsByType,
  rules: ReadonlyMap<string, RolloutChildRule>,
  observedRevisions: readonly ControllerRevision[],
  isUpToDate: ChildUpToDate
): RolloutOutcome {
  const latest = answers[0]
  if (latest === undefined) throw new Error('a rollout needs the latest revision')
  const parentNamespace = parent.metadata.namespace ?? ''
  const plan = planRollout({
    revisions: answers.map((a) => ({
      name: a.revision.revision.metadata.name ?? '',
      children: a.revision.revision.children ?? [],
      desired: byRelativeName(parentNamespace, a.desired),
    })),
    latestOrder: latest.response.children.map((c) => refOf(parentNamespace, c)),
    observed: byRelativeName(parentNamespace, observed),
    rules,
    isUpToDate,
  })
  const kept = answers.flatMap((answer, index) => {
    const children = plan.claims[index] ?? []
    if (index > 0 && countClaims(children) === 0) return []
    return [{ answer, revision: { ...answer.revision.revision, children } }]
  })
  // Each child claimed by an older revision takes that revision's version, if it has one.
  const older = new Map<string, KubeObject>()
  for (const { answer, revision } of kept.slice(1)) {
    const theirs = new Map(
      answer.response.children.map((c) => [refKey(refOf(parentNamespace, c)), c])
    )
    for (const entry of revision.children) {
      for (const name of entry.names) {
        const key = refKey({ apiGroup: entry.apiGroup, kind: entry.kind, name })
        const child = theirs.get(key)
        if (child !== undefined && !older.has(key)) older.set(key, child)
      }
    }
  }
  const children = latest.response.children.map(
    (c) => older.get(refKey(refOf(parentNamespace, c))) ?? c
  )
  const resyncs = answers.map((a) => a.response.resyncAfterMs).filter((ms) => ms > 0)
  const revisions = kept.map((k) => k.revision)
  return {
    response: {
      status: setStatusCondition(latest.response.status, plan.condition),
      children,
      resyncAfterMs: resyncs.length === 0 ? 0 : Math.min(...resyncs),
      finalized: answers.every((a) => a.response.finalized),
    },
    plan,
    revisions,
    writes: planRevisionWrites(observedRevisions, revisions),
  }
}

function refKey(ref: RolloutChildRef): string {
  return `${groupKindKey(ref.apiGroup, ref.kind)}/${ref.name}`
}

/**
 * Decides the ControllerRevision writes: delete observed revisions no longer wanted, update the
 * ones whose content changed (carrying the observed resourceVersion), create the new ones.
 */
export function planRevisionWrites(
  observed: readonly ControllerRevision[],
  desired: readonly ControllerRevision[]
): RevisionWrites {
  const observedByName = new Map(observed.map((r) => [r.metadata.name ?? '', r]))
  const desiredNames = new Set(desired.map((r) => r.metadata.name ?? ''))
  const update: ControllerRevision[] = []
  const create: ControllerRevision[] = []
  for (const revision of desired) {
    const current = observedByName.get(revision.metadata.name ?? '')
    if (current === undefined) create.push(revision)
    else if (!isDeepStrictEqual(current, revision)) {
      update.push({
        ...revision,
        metadata: { ...revision.metadata, resourceVersion: current.metadata.resourceVersion ?? '' },
      })
    }
  }
  return {
    create,
    update,
    delete: observed.filter((r) => !desiredNames.has(r.metadata.name ?? '')),
  }
}
