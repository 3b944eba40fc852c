/**
 * How a failed sync is reported, the same for both controller kinds (spec §3.4): a Warning
 * `SyncError` event on the parent and a log line, except for the outcomes that are not faults.
 * A 403 gets no log line of its own: `ForbiddenRequests` names the missing right once.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import { NotSyncedError, RetryAfterError } from '../../runtime/queue/reconcile-errors.js'
import type { EventSink } from '../events/event-recorder.js'
import { isForbidden } from '../forbidden/is-forbidden.js'
import { messageOf } from '../../core/message-of.js'

/**
 * Runs one parent's sync; when it throws, records the event and log line, then rethrows so that
 * the loop's outcome mapping decides the retry. A hook's 429 and a cache still syncing are
 * expected waits: no event, as upstream.
 */
export async function reportSyncError<T>(
  parent: KubeObject,
  events: EventSink,
  log: Logger,
  sync: () => Promise<T>
): Promise<T> {
  try {
    return await sync()
  } catch (error) {
    if (!(error instanceof RetryAfterError) && !(error instanceof NotSyncedError)) {
      const message = messageOf(error)
      events.record(parent, 'Warning', 'SyncError', `Sync error: ${message}`)
      if (!isForbidden(error)) log.warn('sync failed', { error })
    }
    throw error
  }
}
