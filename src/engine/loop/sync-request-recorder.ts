/**
 * Answers `metactl sync` requests: a sync of a parent that carried an unanswered request records
 * its outcome in the parent's result annotation (see `core/sync-request`).
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { KubeObject } from '../../core/kube-object.js'
import { namespaceOf } from '../../core/object-key.js'
import {
  SYNC_RESULT_ANNOTATION,
  formatSyncResult,
  pendingSyncRequest,
} from '../../core/sync-request.js'
import { NotFoundError } from '../../kube/api-error.js'
import type { DynamicClient, ResourceRef } from '../../kube/dynamic-client.js'
import type { Action } from '../../runtime/queue/controller-loop.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'

/** Writes a result annotation value on a parent of the resource `ref`. */
export type SyncResultWriter = (
  ref: ResourceRef,
  parent: KubeObject,
  value: string
) => Promise<void>

/** A {@link SyncResultWriter} that merge-patches the annotation; failures are logged, not thrown. */
export function patchSyncResult(client: DynamicClient, log: Logger): SyncResultWriter {
  return async (ref, parent, value) => {
    const name = parent.metadata.name ?? ''
    const namespace = namespaceOf(parent)
    try {
      await client.patch(
        ref,
        name,
        { metadata: { annotations: { [SYNC_RESULT_ANNOTATION]: value } } },
        { type: 'merge', ...(namespace === undefined ? {} : { namespace }) }
      )
    } catch (error) {
      // A parent deleted meanwhile has no one left to read the answer.
      if (error instanceof NotFoundError) return
      log.warn('cannot record the result of a sync request', { parent: name, namespace, error })
    }
  }
}

/**
 * Runs `sync` and, when `parent` (as cached when the sync began) carried an unanswered request,
 * records the outcome; the sync's own result or error passes through unchanged.
 *
 * @remarks
 * Only a sync that began after the request answers it: a request arriving during a sync is an
 * update that queues the parent again, and the next sync answers it.
 */
export async function recordingSyncRequest(
  parent: KubeObject | undefined,
  ref: ResourceRef | undefined,
  write: SyncResultWriter,
  sync: () => Promise<Action>
): Promise<Action> {
  const nonce = parent === undefined ? undefined : pendingSyncRequest(parent)
  if (parent === undefined || ref === undefined || nonce === undefined) return sync()
  let action: Action
  try {
    action = await sync()
  } catch (error) {
    await write(ref, parent, formatSyncResult(nonce, error))
    throw error
  }
  await write(ref, parent, formatSyncResult(nonce))
  return action
}

/** The object without what answering a request changes: the result, the version, managed fields. */
function withoutResult(object: KubeObject): unknown {
  const metadata = Object.fromEntries(
    Object.entries(object.metadata).filter(
      ([name]) => name !== 'resourceVersion' && name !== 'managedFields' && name !== 'annotations'
    )
  )
  const annotations = Object.fromEntries(
    Object.entries(object.metadata.annotations ?? {}).filter(
      ([name]) => name !== SYNC_RESULT_ANNOTATION
    )
  )
  return { ...object, metadata: { ...metadata, annotations } }
}

/**
 * Tells whether an update only wrote a sync result (the engine's own answer), so that it wakes
 * nothing: answering a request must not cause another sync.
 */
export function isSyncResultOnlyUpdate(old: KubeObject, object: KubeObject): boolean {
  if (old === object) return false
  if (
    old.metadata.annotations?.[SYNC_RESULT_ANNOTATION] ===
    object.metadata.annotations?.[SYNC_RESULT_ANNOTATION]
  )
    return false
  return isDeepStrictEqual(withoutResult(old), withoutResult(object))
}
