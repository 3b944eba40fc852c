/**
 * Waits on a controller's parent, and when it runs out of time says why the controller did not
 * get there: the parent's status and the engine's last `SyncError` event about it (a child
 * refused, a hook that failed), instead of only "timed out".
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import type { DynamicClient, ResourceRef } from '../kube/dynamic-client.js'
import { EVENTS } from '../kube/well-known-resources.js'
import { waitFor, WaitTimeoutError } from '../runtime/clock/wait-for.js'
import type { WaitForOptions } from '../runtime/clock/wait-for.js'
import { messageOf } from '../core/message-of.js'

/** The parent to wait on. */
export interface ParentRef {
  readonly resource: ResourceRef
  readonly name: string
  readonly namespace?: string
}

interface EventLike {
  readonly reason?: string
  readonly message?: string
  readonly count?: number
  readonly lastTimestamp?: string
  readonly eventTime?: string
  readonly metadata?: { readonly creationTimestamp?: string }
}

function eventTime(event: EventLike): string {
  return event.lastTimestamp ?? event.eventTime ?? event.metadata?.creationTimestamp ?? ''
}

/** The last `SyncError` event about the parent, as one line, or a line saying there is none. */
export async function lastSyncError(client: DynamicClient, parent: ParentRef): Promise<string> {
  const list = await client.list(EVENTS, {
    ...(parent.namespace === undefined ? {} : { namespace: parent.namespace }),
    fieldSelector: `involvedObject.name=${parent.name},reason=SyncError`,
  })
  const events = (list.items as EventLike[]).sort((a, b) =>
    eventTime(a).localeCompare(eventTime(b))
  )
  const last = events.at(-1)
  if (last === undefined) return 'no SyncError event'
  const count = last.count !== undefined && last.count > 1 ? ` (x${last.count})` : ''
  return `last SyncError${count} at ${eventTime(last)}: ${last.message ?? ''}`
}

/**
 * Polls the parent until `condition` returns a value other than `undefined` or `false`.
 *
 * @throws {@link WaitTimeoutError} whose message ends with the parent's status and its last
 *   `SyncError` event.
 *
 * @example
 * ```ts
 * const ready = await waitForParent(client, { resource: SITES, name: 'web', namespace }, (site) =>
 *   site.status?.ready === true ? site : undefined
 * )
 * ```
 */
export async function waitForParent<T>(
  client: DynamicClient,
  parent: ParentRef,
  condition: (parent: KubeObject) => T | undefined | false,
  options: WaitForOptions = {}
): Promise<T> {
  const options_ = parent.namespace === undefined ? {} : { namespace: parent.namespace }
  let last: KubeObject | undefined
  try {
    return await waitFor(async () => {
      last = await client.get(parent.resource, parent.name, options_)
      return condition(last)
    }, options)
  } catch (error) {
    if (!(error instanceof WaitTimeoutError)) throw error
    const status =
      last === undefined
        ? 'the parent was never read'
        : `status ${JSON.stringify(last['status'] ?? null)}`
    const syncError = await lastSyncError(client, parent).catch(
      (cause: unknown) => `events unreadable: ${messageOf(cause)}`
    )
    throw new WaitTimeoutError(`${error.message}; ${status}; ${syncError}`, { cause: error })
  }
}
