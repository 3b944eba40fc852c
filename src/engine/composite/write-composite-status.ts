/**
 * The status step of a CompositeController sync (spec §3.12): the hook's status, with
 * `observedGeneration`, replaces the parent's.
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { JsonObject, KubeObject } from '../../core/kube-object.js'
import { namespaceOption, uidOption } from '../../core/object-key.js'
import { ConflictError, NotFoundError } from '../../kube/api-error.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import type { ObjectClient } from '../../kube/object-client.js'
import { updateLive } from '../children/live-update.js'

/** Where a parent's status is written. */
export interface StatusTarget {
  readonly client: Pick<ObjectClient, 'get' | 'update' | 'updateStatus'>
  readonly ref: ResourceRef
  /** The parent resource has a status subresource. */
  readonly hasStatusSubresource: boolean
}

/** Returns the status a composite sync writes: the hook's, plus the parent's generation. */
export function compositeStatus(parent: KubeObject, hookStatus: JsonObject | null): JsonObject {
  return { ...(hookStatus ?? {}), observedGeneration: parent.metadata.generation ?? 0 }
}

/**
 * The status this process last wrote over each cached parent object. Informer caches replace an
 * object when its watch event arrives, so while the cache still hands out the object a status was
 * written over, that write's own event is on its way (and syncs the parent again). Keyed weakly:
 * an entry goes with the cached object it describes.
 */
const writtenOver = new WeakMap<KubeObject, JsonObject>()

/**
 * Writes the parent's status unless the cached parent already has it. NotFound and a conflict
 * that outlasts the retries end quietly: the event that changed the parent syncs it again.
 */
export async function writeCompositeStatus(
  target: StatusTarget,
  parent: KubeObject,
  status: JsonObject,
  signal?: AbortSignal
): Promise<void> {
  // Upstream always re-reads the parent before comparing. When the cached copy already has this
  // status there is nothing to write; if the cache were behind, the watch event that brings the
  // newer parent syncs it again. This keeps a converged resync free of API requests.
  if (isDeepStrictEqual(parent['status'], status)) return
  // A sync woken by the events of its own child writes often runs before the watch brings back
  // the status it just wrote: the cache still holds the object written over. Writing from it
  // again could only answer 409 and cost a GET (one of each per spec change at 3,000 parents,
  // docs/performance.md); the event of the first write syncs the parent once more anyway.
  const already = writtenOver.get(parent)
  if (already !== undefined && isDeepStrictEqual(already, status)) return
  const call = { ...namespaceOption(parent), ...(signal === undefined ? {} : { signal }) }
  if (target.hasStatusSubresource) {
    // First try the copy we have: its resourceVersion makes the write conditional, so a parent
    // that changed or was replaced meanwhile answers 409 and takes the re-reading path below.
    // This saves the GET upstream makes before every status write.
    try {
      await target.client.updateStatus(target.ref, { ...parent, status }, call)
      writtenOver.set(parent, status)
      return
    } catch (error) {
      if (error instanceof NotFoundError) return
      if (!(error instanceof ConflictError)) throw error
    }
  }
  try {
    const live = await updateLive(
      target.client,
      target.ref,
      parent.metadata.name ?? '',
      (current) => {
        if (isDeepStrictEqual(current['status'], status)) return undefined
        current['status'] = status
        return current
      },
      { ...call, ...uidOption(parent), status: target.hasStatusSubresource }
    )
    // Written now, or found already there: either way the cache is behind the live parent.
    if (live !== undefined) writtenOver.set(parent, status)
  } catch (error) {
    // A conflict that outlasted the retries: the next event resyncs (upstream returns success).
    if (error instanceof ConflictError) return
    throw error
  }
}
