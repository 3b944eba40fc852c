/**
 * The metadata step of a DecoratorController sync (spec §2.4, §3.14 step 7): the hook's label
 * and annotation changes, status and `finalized` applied to the target, decided purely, then
 * written.
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { KubeObject } from '../../core/kube-object.js'
import { namespaceOption } from '../../core/object-key.js'
import type { DecoratorSyncResponse } from '../../api/hook-model.js'
import { ConflictError, NotFoundError } from '../../kube/api-error.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import type { ObjectClient } from '../../kube/object-client.js'

/** The target as the hook wants it, and which parts changed. */
export interface DecoratedTarget {
  /** A new object: the target with the changes applied. */
  readonly object: KubeObject
  readonly metadataChanged: boolean
  readonly statusChanged: boolean
}

function applyStringChanges(
  current: Readonly<Record<string, string>> | undefined,
  changes: Readonly<Record<string, string | null>>
): Record<string, string> {
  const next = new Map(Object.entries(current ?? {}))
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) next.delete(key)
    else next.set(key, value)
  }
  return Object.fromEntries(next)
}

/**
 * Applies a decorator hook's answer to the target, without writing: labels and annotations are
 * partial updates (a null value deletes the key), a null status leaves the status alone, and
 * `finalized` removes our finalizer. A status is a change whenever it differs, an absent status
 * and `{}` included.
 */
export function decorateTarget(
  target: KubeObject,
  response: DecoratorSyncResponse,
  finalizer: string
): DecoratedTarget {
  const object = structuredClone(target)
  const labels = applyStringChanges(target.metadata.labels, response.labels)
  const annotations = applyStringChanges(target.metadata.annotations, response.annotations)
  const finalizers = target.metadata.finalizers ?? []
  const dropFinalizer = response.finalized && finalizers.includes(finalizer)
  const metadataChanged =
    !isDeepStrictEqual(labels, target.metadata.labels ?? {}) ||
    !isDeepStrictEqual(annotations, target.metadata.annotations ?? {}) ||
    dropFinalizer
  if (metadataChanged) {
    object.metadata.labels = labels
    object.metadata.annotations = annotations
    if (dropFinalizer) object.metadata.finalizers = finalizers.filter((f) => f !== finalizer)
  }
  let statusChanged = false
  if (response.status !== null) {
    statusChanged = !('status' in target) || !isDeepStrictEqual(target['status'], response.status)
    object['status'] = response.status
  }
  return { object, metadataChanged, statusChanged }
}

/** Where a target is written. */
export interface TargetWriter {
  readonly client: Pick<ObjectClient, 'update' | 'updateStatus'>
  readonly ref: ResourceRef
  readonly hasStatusSubresource: boolean
}

/**
 * Writes a decorated target against the resourceVersion it was read with: the status subresource
 * first (when the status changed and the resource has one), then the main resource when labels,
 * annotations or finalizers changed (or the status did, without a subresource). Returns the
 * target as last written (the input when nothing changed), or `undefined` when a write met
 * NotFound or a conflict: the event that changed the target syncs it again (as upstream).
 */
export async function writeDecoratedTarget(
  writer: TargetWriter,
  decorated: DecoratedTarget,
  signal?: AbortSignal
): Promise<KubeObject | undefined> {
  const call = { ...namespaceOption(decorated.object), ...(signal === undefined ? {} : { signal }) }
  let current = decorated.object
  try {
    if (decorated.statusChanged && writer.hasStatusSubresource) {
      const written = await writer.client.updateStatus(writer.ref, current, call)
      // Carry on from the new resourceVersion, keeping the decorated metadata.
      current = {
        ...current,
        metadata: { ...current.metadata, resourceVersion: written.metadata.resourceVersion ?? '' },
      }
    }
    if (decorated.metadataChanged || (decorated.statusChanged && !writer.hasStatusSubresource)) {
      current = await writer.client.update(writer.ref, current, call)
    }
    return current
  } catch (error) {
    if (error instanceof NotFoundError || error instanceof ConflictError) return undefined
    throw error
  }
}
