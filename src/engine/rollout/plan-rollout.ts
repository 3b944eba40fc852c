/**
 * The rollout planner (upstream `syncRollingUpdate`, spec §3.11 step 6): which revision claims
 * which child, the one child that moves to the latest revision on this pass, and the `Updated`
 * condition that says why. Pure.
 *
 * @remarks
 * Children are named by their relative name (`name`; `namespace/name` for a namespaced child of
 * a cluster-scoped parent) and their kind by group and kind, the version ignored, as upstream.
 * Upstream looks observed children up by bare name in a map keyed `namespace/name`, so for
 * namespaced parents its rollouts stall after the first child (spec §3.11 [BUG]); here the
 * observed children are indexed by the same relative names the claims use.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import { groupOf } from '../../core/owner-references.js'
import type { StatusConditionCheck, UpdateMethod } from '../../api/controller-spec-fields.js'
import type { RevisionChildren } from './controller-revision.js'
import { addClaim, groupKindKey, removeClaim } from './controller-revision.js'
import type { StatusCondition } from './status-condition.js'
import { findStatusCondition, UPDATED_CONDITION_TYPE } from './status-condition.js'
import { messageOf } from '../../core/message-of.js'

/** How children of one kind are updated, by `Kind.group` key. */
export interface RolloutChildRule {
  readonly method: UpdateMethod
  readonly statusChecks: readonly StatusConditionCheck[]
}

/** A child by API group, kind and relative name. */
export interface RolloutChildRef {
  readonly apiGroup: string
  readonly kind: string
  readonly name: string
}

/** Objects by `Kind.group` key, then relative name. */
export type RelativeObjects = ReadonlyMap<string, ReadonlyMap<string, KubeObject>>

/** One revision as the planner sees it. */
export interface RevisionState {
  /** The ControllerRevision's name. */
  readonly name: string
  /** The children it claims. */
  readonly children: readonly RevisionChildren[]
  /** The children its hook call desires. */
  readonly desired: RelativeObjects
}

/** What {@link planRollout} decides on. */
export interface RolloutInput {
  /** Every revision, the latest first. */
  readonly revisions: readonly RevisionState[]
  /** The latest revision's desired children in the order its hook returned them. */
  readonly latestOrder: readonly RolloutChildRef[]
  /** The observed children. */
  readonly observed: RelativeObjects
  /** The child rules by `Kind.group` key. */
  readonly rules: ReadonlyMap<string, RolloutChildRule>
  /**
   * Tells whether an observed child holds its desired state: the active apply strategy's test
   * (`ChildApplier.isUpToDate`), since only the strategy that writes children knows when it is
   * done with one. May throw when it cannot tell.
   */
  readonly isUpToDate: ChildUpToDate
}

/** See {@link RolloutInput.isUpToDate}. */
export type ChildUpToDate = (observed: KubeObject, desired: KubeObject) => boolean

/** Why a rollout waits before moving the next child. */
export type RolloutWaitReason =
  /** A child on the latest revision is not observed (yet): e.g. between a delete and a create. */
  | 'missing'
  /** A child on the latest revision does not match its desired state yet. */
  | 'not-updated'
  /** A RollingInPlace child's `status.observedGeneration` is behind its generation. */
  | 'stale-generation'
  /** A child on the latest revision fails a `statusChecks` condition. */
  | 'status-check'

/** What {@link planRollout} decided. */
export interface RolloutPlan {
  /** The claims of each revision, in the order of the input. */
  readonly claims: readonly (readonly RevisionChildren[])[]
  /** Children moved to the latest revision because they need no change. */
  readonly adopted: readonly RolloutChildRef[]
  /** The one child moved to the latest revision on this pass, with the revision it left. */
  readonly moved: (RolloutChildRef & { readonly from: string | undefined }) | undefined
  /** Why the rollout waits, when it does. */
  readonly waiting: { readonly reason: RolloutWaitReason; readonly message: string } | undefined
  /** The `Updated` condition for the parent status. */
  readonly condition: StatusCondition
}

/** Tells whether an update method is a rolling one. */
export function isRollingMethod(method: UpdateMethod | undefined): boolean {
  return method === 'RollingRecreate' || method === 'RollingInPlace'
}

/**
 * Plans one rollout pass.
 *
 * @remarks
 * Claims of kinds that no longer roll and of children the latest revision no longer desires are
 * dropped, and a child claimed twice stays with the first revision (the latest comes first).
 * Unclaimed rolling children go to the latest revision, and so do children an old revision
 * claims that already match the latest's desired state. Then, walking the latest hook's children
 * in order, the first rolling child not on the latest revision moves to it, but only while every
 * child already there is observed, up to date, has observed its generation (RollingInPlace) and
 * passes the kind's status checks; otherwise the rollout waits and the condition says why.
 */
export function planRollout(input: RolloutInput): RolloutPlan {
  const rolling = (apiGroup: string, kind: string): boolean =>
    isRollingMethod(input.rules.get(groupKindKey(apiGroup, kind))?.method)
  const { claims, owner } = settleClaims(input, rolling)
  const adopted = claimLatest(input, claims, owner, rolling)
  const latestName = input.revisions[0]?.name ?? ''
  for (const child of input.latestOrder) {
    if (!rolling(child.apiGroup, child.kind)) continue
    const from = owner.get(groupKindKey(child.apiGroup, child.kind))?.get(child.name)
    if (from === 0) continue
    const wait = checkLatestChildren(input, claims[0] ?? [])
    if (wait !== undefined) {
      return {
        claims,
        adopted,
        moved: undefined,
        waiting: wait,
        condition: updated('False', 'RolloutWaiting', wait.message),
      }
    }
    claims[0] = addClaim(claims[0] ?? [], child.apiGroup, child.kind, child.name)
    for (let i = 1; i < claims.length; i++)
      claims[i] = removeClaim(claims[i] ?? [], child.apiGroup, child.kind, child.name)
    return {
      claims,
      adopted,
      moved: { ...child, from: from === undefined ? undefined : input.revisions[from]?.name },
      waiting: undefined,
      condition: updated('False', 'RolloutProgressing', `updating ${child.kind} ${child.name}`),
    }
  }
  return {
    claims,
    adopted,
    moved: undefined,
    waiting: undefined,
    condition: updated('True', 'OnLatestRevision', `latest ControllerRevision: ${latestName}`),
  }
}

function updated(status: string, reason: string, message: string): StatusCondition {
  return { type: UPDATED_CONDITION_TYPE, status, reason, message }
}

/**
 * Drops stale claims and builds the lookup from a child to the index of the revision that
 * claims it.
 */
function settleClaims(
  input: RolloutInput,
  rolling: (apiGroup: string, kind: string) => boolean
): { claims: RevisionChildren[][]; owner: Map<string, Map<string, number>> } {
  const latestDesired = input.revisions[0]?.desired
  const owner = new Map<string, Map<string, number>>()
  const claims = input.revisions.map((revision, index) =>
    revision.children.flatMap((entry): RevisionChildren[] => {
      if (!rolling(entry.apiGroup, entry.kind)) return []
      const key = groupKindKey(entry.apiGroup, entry.kind)
      const byName = owner.get(key) ?? new Map<string, number>()
      owner.set(key, byName)
      const names = entry.names.filter((name) => {
        if (latestDesired?.get(key)?.has(name) !== true || byName.has(name)) return false
        byName.set(name, index)
        return true
      })
      return names.length === 0 ? [] : [{ ...entry, names }]
    })
  )
  return { claims, owner }
}

/**
 * Gives the latest revision the rolling children nobody claims, and those an old revision claims
 * that already match the latest's desired state (so a no-op move does not wait a pass).
 */
function claimLatest(
  input: RolloutInput,
  claims: RevisionChildren[][],
  owner: Map<string, Map<string, number>>,
  rolling: (apiGroup: string, kind: string) => boolean
): RolloutChildRef[] {
  const adopted: RolloutChildRef[] = []
  for (const [key, objects] of input.revisions[0]?.desired ?? new Map<string, never>()) {
    for (const [name, desired] of objects) {
      const { apiGroup, kind } = splitKind(desired)
      if (!rolling(apiGroup, kind)) continue
      const byName = owner.get(key) ?? new Map<string, number>()
      owner.set(key, byName)
      const from = byName.get(name)
      if (from === 0) continue
      if (from !== undefined) {
        const observed = input.observed.get(key)?.get(name)
        if (observed === undefined || !safeUpToDate(input.isUpToDate, observed, desired)) continue
        claims[from] = removeClaim(claims[from] ?? [], apiGroup, kind, name)
        adopted.push({ apiGroup, kind, name })
      }
      claims[0] = addClaim(claims[0] ?? [], apiGroup, kind, name)
      byName.set(name, 0)
    }
  }
  return adopted
}

function safeUpToDate(
  isUpToDate: ChildUpToDate,
  observed: KubeObject,
  desired: KubeObject
): boolean {
  try {
    return isUpToDate(observed, desired)
  } catch {
    // E.g. an unreadable last-applied annotation: the move cannot be proven a no-op.
    return false
  }
}

function splitKind(object: KubeObject): { apiGroup: string; kind: string } {
  return { apiGroup: groupOf(object.apiVersion), kind: object.kind }
}

/**
 * Checks that every rolling child on the latest revision is observed, up to date, has observed
 * its latest generation (RollingInPlace) and passes its kind's status checks (upstream
 * `shouldContinueRolling`); returns why not, or undefined.
 */
function checkLatestChildren(
  input: RolloutInput,
  latestClaims: readonly RevisionChildren[]
): { reason: RolloutWaitReason; message: string } | undefined {
  const latestDesired = input.revisions[0]?.desired
  for (const entry of latestClaims) {
    const key = groupKindKey(entry.apiGroup, entry.kind)
    const rule = input.rules.get(key)
    if (rule === undefined || !isRollingMethod(rule.method)) continue
    for (const name of entry.names) {
      const child = input.observed.get(key)?.get(name)
      const what = `${entry.kind} ${name}`
      if (child === undefined) return { reason: 'missing', message: `missing child ${what}` }
      const desired = latestDesired?.get(key)?.get(name)
      if (desired !== undefined) {
        let upToDate: boolean
        try {
          upToDate = input.isUpToDate(child, desired)
        } catch (error) {
          const cause = messageOf(error)
          return {
            reason: 'not-updated',
            message: `can't check if child ${what} is updated: ${cause}`,
          }
        }
        if (!upToDate) return { reason: 'not-updated', message: `child ${what} is not updated yet` }
      }
      if (rule.method === 'RollingInPlace' && hasStaleGeneration(child)) {
        return {
          reason: 'stale-generation',
          message: `child ${what} with RollingInPlace update strategy hasn't observed latest spec`,
        }
      }
      const failed = checkChildStatus(rule.statusChecks, child)
      if (failed !== undefined)
        return { reason: 'status-check', message: `child ${what} failed status check: ${failed}` }
    }
  }
  return undefined
}

/** `status.observedGeneration` is set (> 0) and behind `metadata.generation`. */
function hasStaleGeneration(child: KubeObject): boolean {
  const status = child['status']
  const observed = isJsonObject(status) ? status['observedGeneration'] : undefined
  return typeof observed === 'number' && observed > 0 && observed < (child.metadata.generation ?? 0)
}

/**
 * Checks a child against status checks: each needs a `status.conditions[]` entry of its type,
 * with the given status and reason when those are set. Returns the first failure, or undefined.
 */
export function checkChildStatus(
  checks: readonly StatusConditionCheck[],
  child: KubeObject
): string | undefined {
  for (const check of checks) {
    const condition = findStatusCondition(child, check.type)
    if (condition === undefined) return `required condition type missing: "${check.type}"`
    const status = typeof condition['status'] === 'string' ? condition['status'] : ''
    if (check.status !== undefined && status !== check.status)
      return `"${check.type}" condition status is "${status}" (want "${check.status}")`
    const reason = typeof condition['reason'] === 'string' ? condition['reason'] : ''
    if (check.reason !== undefined && reason !== check.reason)
      return `"${check.type}" condition reason is "${reason}" (want "${check.reason}")`
  }
  return undefined
}
