/**
 * The finalizer step of the sync pipeline, shared by both controller kinds (spec §3.5 step 3,
 * §3.7, §3.14 step 3): a pure decision, then one guarded write.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { isDeleting } from '../../core/owner-references.js'
import { namespaceOption, uidOption } from '../../core/object-key.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import type { ObjectClient } from '../../kube/object-client.js'
import { updateLive } from '../children/live-update.js'

/** What the finalizer step does to a parent: add ours, remove ours, or leave it as it is. */
export type FinalizerDecision = 'add' | 'remove' | 'keep'

/** The facts {@link decideFinalizer} decides on. */
export interface FinalizerState {
  /** The controller has a finalize hook, so it puts a finalizer on its parents. */
  readonly enabled: boolean
  /** The parent carries our finalizer. */
  readonly present: boolean
  /** The parent has a deletionTimestamp. */
  readonly deleting: boolean
}

/**
 * Decides the finalizer step: a controller with a finalize hook adds its finalizer before any
 * other action (so cleanup always gets its chance), except on a parent already being deleted,
 * which cannot take a new finalizer; a controller without one removes a finalizer left by an
 * earlier spec that had one.
 */
export function decideFinalizer(state: FinalizerState): FinalizerDecision {
  if (state.enabled) return state.present || state.deleting ? 'keep' : 'add'
  return state.present ? 'remove' : 'keep'
}

/** Tells whether the object carries this finalizer. */
export function hasFinalizer(object: KubeObject, finalizer: string): boolean {
  return object.metadata.finalizers?.includes(finalizer) === true
}

/** The garbage collector's own finalizers: while one is present, children are left to the GC. */
const GC_FINALIZERS: readonly string[] = ['foregroundDeletion', 'orphan']

/**
 * Tells whether children are managed on this sync: always for a parent that is not being
 * deleted; for a deleting one only while our finalizer holds it and no GC finalizer is present
 * (upstream `ShouldFinalize`). Pass the parent as it is after the step that may have removed
 * the finalizer: once `finalized: true` released a deleting parent, its children are the
 * garbage collector's.
 */
export function shouldManageChildren(
  parent: KubeObject,
  finalizer: string,
  finalizeEnabled: boolean
): boolean {
  if (!isDeleting(parent)) return true
  const finalizers = parent.metadata.finalizers ?? []
  return (
    finalizeEnabled &&
    finalizers.includes(finalizer) &&
    !finalizers.some((f) => GC_FINALIZERS.includes(f))
  )
}

/** Where a parent's finalizer is written. */
export interface FinalizerTarget {
  readonly client: Pick<ObjectClient, 'get' | 'update' | 'updateStatus'>
  /** The parent's resource. */
  readonly ref: ResourceRef
  readonly finalizer: string
}

/**
 * Adds (`present`) or removes our finalizer on the live parent: GET, then PUT, with conflicts
 * retried and the UID checked. Returns the parent as written, or `undefined` when it is gone or
 * was replaced by a same-named object.
 */
export async function setFinalizer(
  target: FinalizerTarget,
  parent: KubeObject,
  present: boolean,
  signal?: AbortSignal
): Promise<KubeObject | undefined> {
  const { finalizer } = target
  return updateLive(
    target.client,
    target.ref,
    parent.metadata.name ?? '',
    (current) => {
      const list = current.metadata.finalizers ?? []
      if (list.includes(finalizer) === present) return undefined
      // A parent already being deleted cannot take a new finalizer.
      if (present && isDeleting(current)) return undefined
      current.metadata.finalizers = present
        ? [...list, finalizer]
        : list.filter((f) => f !== finalizer)
      return current
    },
    {
      ...namespaceOption(parent),
      ...uidOption(parent),
      ...(signal === undefined ? {} : { signal }),
    }
  )
}

/**
 * Runs the finalizer step: decides, then writes only when something changes. Returns the parent
 * to continue the sync with, or `undefined` when it is gone.
 */
export async function syncFinalizer(
  target: FinalizerTarget,
  parent: KubeObject,
  enabled: boolean,
  signal?: AbortSignal
): Promise<KubeObject | undefined> {
  const decision = decideFinalizer({
    enabled,
    present: hasFinalizer(parent, target.finalizer),
    deleting: isDeleting(parent),
  })
  switch (decision) {
    case 'keep':
      return parent
    case 'add':
      return setFinalizer(target, parent, true, signal)
    case 'remove':
      return setFinalizer(target, parent, false, signal)
    default: {
      const unreachable: never = decision
      throw new Error(`unknown finalizer decision ${String(unreachable)}`)
    }
  }
}
