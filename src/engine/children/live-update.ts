import type { KubeObject } from '../../core/kube-object.js'
import { ConflictError, NotFoundError } from '../../kube/api-error.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import type { ObjectClient } from '../../kube/object-client.js'

/** Options of {@link updateLive}. */
export interface LiveUpdateOptions {
  readonly namespace?: string
  /** The object must still have this UID; otherwise it was replaced and counts as gone. */
  readonly uid?: string
  /** Writes the status subresource instead of the main resource. */
  readonly status?: boolean
  /** Attempts before a conflict is given up on (4, as client-go's DefaultBackoff). */
  readonly attempts?: number
  readonly signal?: AbortSignal
}

/**
 * Reads an object live, lets `mutate` change a copy, and PUTs it back, retrying on conflict.
 *
 * @remarks
 * `mutate` returns `undefined` when nothing needs writing. Returns the written (or unchanged)
 * object, or `undefined` when the object is gone or was replaced (UID mismatch), which callers
 * treat as "nothing to do": a later event will bring the new object.
 *
 * Upstream: finalizer changes, status writes and adopt/release all re-GET and check the UID
 * (spec §8 item 37), so a deleted and recreated parent is never confused with the old one.
 */
export async function updateLive(
  client: Pick<ObjectClient, 'get' | 'update' | 'updateStatus'>,
  ref: ResourceRef,
  name: string,
  mutate: (current: KubeObject) => KubeObject | undefined,
  options: LiveUpdateOptions = {}
): Promise<KubeObject | undefined> {
  const attempts = options.attempts ?? 4
  const call = {
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  }
  for (let attempt = 1; ; attempt++) {
    let current: KubeObject
    try {
      current = await client.get(ref, name, call)
    } catch (error) {
      if (error instanceof NotFoundError) return undefined
      throw error
    }
    if (options.uid !== undefined && current.metadata.uid !== options.uid) return undefined
    const next = mutate(structuredClone(current))
    if (next === undefined) return current
    try {
      return options.status === true
        ? await client.updateStatus(ref, next, call)
        : await client.update(ref, next, call)
    } catch (error) {
      if (error instanceof NotFoundError) return undefined
      if (error instanceof ConflictError && attempt < attempts) {
        await new Promise((resolve) => setTimeout(resolve, 10 * 5 ** (attempt - 1)))
        continue
      }
      throw error
    }
  }
}
