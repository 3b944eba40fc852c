/**
 * Decides, without writing anything, what it takes to bring observed children to the desired
 * state: the pure half of {@link manageChildren}.
 *
 * @remarks
 * The rules are upstream's (spec §3.8), exactly as `manageChildren` applies them:
 *
 * - every observed child of a declared type that is no longer desired is deleted, types in sorted
 *   order, unless it is already being deleted;
 * - a desired child that is not observed is created, carrying the last-applied annotation and the
 *   parent's controller reference (unless it already names the parent as an owner);
 * - a desired child that is observed is merged three ways ({@link applyUpdate}); when the merged
 *   object equals the observed one there is nothing to do, and when the observed child is being
 *   deleted it is left alone; otherwise the type's update method decides: `OnDelete` never
 *   updates, `Recreate` and `RollingRecreate` delete (the next sync creates), `InPlace` and
 *   `RollingInPlace` write the merged object;
 * - types not declared (not in `types`) are ignored, observed or desired.
 *
 * A child whose merge cannot be computed (an unreadable last-applied annotation) is reported in
 * `failed`, so that the executor reports it among the other errors without blocking them.
 *
 * @module
 */
import type { KubeObject, OwnerReference } from '../../core/kube-object.js'
import { isDeleting, makeControllerRef } from '../../core/owner-references.js'
import type { ObjectsByType } from '../../api/hook-model.js'
import type { UpdateMethod } from '../../api/composite-controller-spec.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import {
  applyUpdate,
  isSemanticallyEqual,
  LAST_APPLIED_ANNOTATION,
  setLastApplied,
} from './dynamic-apply.js'
import type { DesiredChildren } from '../../api/desired-children.js'

/** A declared child type: where to write it and how to update it. */
export interface ChildType {
  readonly ref: ResourceRef
  readonly updateMethod: UpdateMethod
}

/** Which child an entry of a {@link ChildPlan} is about. */
export interface PlannedChild {
  /** The GVK key, e.g. `Pod.v1`. */
  readonly type: string
  /** The uniform object key: `namespace/name`, or `name` when cluster-scoped. */
  readonly key: string
}

/** An observed child that is no longer desired: delete it. */
export interface PlannedDelete extends PlannedChild {
  readonly op: 'delete'
  /** The observed object (its UID is the delete precondition). */
  readonly object: KubeObject
}

/** A desired child that is not observed: create it. */
export interface PlannedCreate extends PlannedChild {
  readonly op: 'create'
  /** The object to create, with the last-applied annotation and the controller reference. */
  readonly object: KubeObject
}

/**
 * An observed child that differs from the desired one, under an in-place method: PUT it.
 *
 * @remarks
 * Under a recreate method too when the only difference is the missing last-applied annotation
 * (a child written by server-side apply, taken back by the dynamic apply): recreating a child to
 * add a bookkeeping annotation would be pointless and disruptive, so the annotation is written.
 */
export interface PlannedUpdate extends PlannedChild {
  readonly op: 'update'
  readonly method: UpdateMethod
  /** The merged object to write; it keeps the observed `resourceVersion`. */
  readonly object: KubeObject
  /** The observed object. */
  readonly observed: KubeObject
}

/**
 * An observed child that differs from the desired one, under a recreate method: delete it, so
 * that the next sync creates it anew.
 */
export interface PlannedRecreate extends PlannedChild {
  readonly op: 'recreate'
  readonly method: 'Recreate' | 'RollingRecreate'
  /** The observed object to delete (its UID is the delete precondition). */
  readonly object: KubeObject
  /** The merged object, which shows what changes. */
  readonly merged: KubeObject
}

/** A desired child whose merged object equals the observed one: nothing to write. */
export interface PlannedUnchanged extends PlannedChild {
  readonly op: 'unchanged'
  /** The observed object. */
  readonly object: KubeObject
}

/** Why a child that would otherwise be written is left alone. */
export type SkipReason =
  /** The observed child is already being deleted. */
  | 'Deleting'
  /** The observed child differs, but its type's update method is `OnDelete`. */
  | 'OnDelete'

/** An observed child left alone; see {@link SkipReason}. */
export interface PlannedSkip extends PlannedChild {
  readonly op: 'skip'
  readonly reason: SkipReason
  /** The observed object. */
  readonly object: KubeObject
  /** Whether the child is still desired (a deleting child may be either). */
  readonly desired: boolean
}

/** A desired child whose write could not be computed (an unreadable last-applied annotation). */
export interface PlanFailure extends PlannedChild {
  readonly op: 'fail'
  readonly error: unknown
}

/**
 * A desired child of a declared type, with what was observed of it: the input of appliers that
 * decide for themselves (server-side apply), rather than from the 3-way merge.
 */
export interface PlannedApply extends PlannedChild {
  /** The desired object, as prepared (no last-applied annotation or controller reference added). */
  readonly desired: KubeObject
  readonly observed: KubeObject | undefined
  readonly method: UpdateMethod
}

/** Something the executor does, in order. */
export type PlannedStep =
  PlannedDelete | PlannedCreate | PlannedUpdate | PlannedRecreate | PlanFailure

/** Every decision {@link planChildren} made. */
export interface ChildPlan {
  /** Observed children no longer desired, by type in sorted order. */
  readonly delete: readonly PlannedDelete[]
  readonly create: readonly PlannedCreate[]
  readonly update: readonly PlannedUpdate[]
  readonly recreate: readonly PlannedRecreate[]
  readonly unchanged: readonly PlannedUnchanged[]
  readonly skipped: readonly PlannedSkip[]
  readonly failed: readonly PlanFailure[]
  /**
   * What to execute, in upstream's order: the deletes, then the creates, updates, recreates and
   * failures in the order of the desired children. The same entries as in the lists above.
   */
  readonly steps: readonly PlannedStep[]
  /** Every desired child of a declared type, in order; see {@link PlannedApply}. */
  readonly apply: readonly PlannedApply[]
  /** The parent's controller reference, which every written child carries. */
  readonly controllerRef: OwnerReference
}

/**
 * Plans the deletes, creates and updates that bring `observed` to `desired`.
 *
 * @remarks
 * Pure: nothing is written and no argument is changed. Objects to write (created and merged
 * ones) are new; entries about an observed object refer to it as given, so it must not be
 * changed through the plan.
 *
 * @param observed - The claimed children, by GVK key and object key.
 * @param desired - The prepared desired children ({@link prepareDesiredChildren}).
 * @param types - The declared child types by GVK key; other types are ignored.
 * @param parent - The parent, for the controller reference of created children.
 */
export function planChildren(
  observed: ObjectsByType,
  desired: DesiredChildren,
  types: ReadonlyMap<string, ChildType>,
  parent: KubeObject
): ChildPlan {
  const plan = {
    delete: [] as PlannedDelete[],
    create: [] as PlannedCreate[],
    update: [] as PlannedUpdate[],
    recreate: [] as PlannedRecreate[],
    unchanged: [] as PlannedUnchanged[],
    skipped: [] as PlannedSkip[],
    failed: [] as PlanFailure[],
    steps: [] as PlannedStep[],
    apply: [] as PlannedApply[],
    controllerRef: makeControllerRef(parent),
  }

  planDeletes(plan, observed, desired, types)
  for (const [type, children] of desired) {
    const childType = types.get(type)
    if (childType === undefined) continue
    const seen = observed.get(type)
    for (const [key, want] of children) {
      const have = seen?.get(key)
      plan.apply.push({ type, key, desired: want, observed: have, method: childType.updateMethod })
      const step = planOne(type, key, have, want, childType, parent)
      switch (step.op) {
        case 'create':
          plan.create.push(step)
          plan.steps.push(step)
          break
        case 'update':
          plan.update.push(step)
          plan.steps.push(step)
          break
        case 'recreate':
          plan.recreate.push(step)
          plan.steps.push(step)
          break
        case 'fail':
          plan.failed.push(step)
          plan.steps.push(step)
          break
        case 'unchanged':
          plan.unchanged.push(step)
          break
        case 'skip':
          plan.skipped.push(step)
          break
        default: {
          const unreachable: never = step
          throw new Error(`unknown plan step ${String(unreachable)}`)
        }
      }
    }
  }
  return plan
}

/** Adds a delete for every observed child the answer no longer names (a skip if it is going). */
function planDeletes(
  plan: { delete: PlannedDelete[]; skipped: PlannedSkip[]; steps: PlannedStep[] },
  observed: ObjectsByType,
  desired: DesiredChildren,
  types: ReadonlyMap<string, ChildType>
): void {
  for (const type of [...observed.keys()].sort()) {
    if (!types.has(type)) continue
    const wanted = desired.get(type)
    for (const [key, child] of observed.get(type) ?? []) {
      if (wanted?.has(key) === true) continue
      if (isDeleting(child)) {
        plan.skipped.push({
          op: 'skip',
          type,
          key,
          reason: 'Deleting',
          object: child,
          desired: false,
        })
        continue
      }
      const step: PlannedDelete = { op: 'delete', type, key, object: child }
      plan.delete.push(step)
      plan.steps.push(step)
    }
  }
}

function planOne(
  type: string,
  key: string,
  have: KubeObject | undefined,
  want: KubeObject,
  childType: ChildType,
  parent: KubeObject
): PlannedCreate | PlannedUpdate | PlannedRecreate | PlanFailure | PlannedUnchanged | PlannedSkip {
  if (have === undefined) {
    try {
      return { op: 'create', type, key, object: objectToCreate(want, parent) }
    } catch (error) {
      return { op: 'fail', type, key, error }
    }
  }
  let merged: KubeObject
  try {
    merged = applyUpdate(have, want)
  } catch (error) {
    // Upstream merges before it looks at anything else, so even a deleting child fails here.
    return { op: 'fail', type, key, error }
  }
  if (isSemanticallyEqual(merged, have)) {
    return { op: 'unchanged', type, key, object: have }
  }
  if (isDeleting(have)) {
    return {
      op: 'skip',
      type,
      key,
      reason: 'Deleting',
      object: have,
      desired: true,
    }
  }
  const method = childType.updateMethod
  if (method !== 'OnDelete' && onlyRecordsLastApplied(have, merged)) {
    return { op: 'update', type, key, method, object: merged, observed: have }
  }
  switch (method) {
    case 'OnDelete':
      return {
        op: 'skip',
        type,
        key,
        reason: 'OnDelete',
        object: have,
        desired: true,
      }
    case 'Recreate':
    case 'RollingRecreate':
      return { op: 'recreate', type, key, method, object: have, merged }
    case 'InPlace':
    case 'RollingInPlace':
      return { op: 'update', type, key, method, object: merged, observed: have }
    default: {
      const unreachable: never = method
      return {
        op: 'fail',
        type,
        key,
        error: new Error(`unknown update method ${String(unreachable)}`),
      }
    }
  }
}

/**
 * Tells whether the merge only adds the last-applied annotation to a child that had none, e.g. a
 * child server-side apply wrote before the engine was switched back to the dynamic apply.
 */
function onlyRecordsLastApplied(have: KubeObject, merged: KubeObject): boolean {
  if (have.metadata.annotations?.[LAST_APPLIED_ANNOTATION] !== undefined) return false
  const annotations = { ...merged.metadata.annotations }
  Reflect.deleteProperty(annotations, LAST_APPLIED_ANNOTATION)
  const metadata = { ...merged.metadata, annotations }
  // The merge creates the annotations map when the child had none.
  if (have.metadata.annotations === undefined && Object.keys(annotations).length === 0) {
    Reflect.deleteProperty(metadata, 'annotations')
  }
  return isSemanticallyEqual({ ...merged, metadata }, have)
}

/** The object written on create: the last-applied annotation, then the controller reference. */
function objectToCreate(want: KubeObject, parent: KubeObject): KubeObject {
  const object = setLastApplied(want)
  const owners = object.metadata.ownerReferences ?? []
  if (!owners.some((r) => r.uid === parent.metadata.uid)) {
    object.metadata.ownerReferences = [...owners, makeControllerRef(parent)]
  }
  return object
}
