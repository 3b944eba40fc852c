/**
 * A kind's part of the way into a sync, the same for both kinds: once the kind has found the
 * cached parent and built its strategy, these steps run in this order around the pipeline.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import type { ObjectClient } from '../../kube/object-client.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import type { Action } from '../../runtime/queue/controller-loop.js'
import type { ChildType } from '../children/plan-children.js'
import type { EventSink } from '../events/event-recorder.js'
import { reportSyncError } from './report-sync-error.js'
import { runSync } from './run-sync.js'
import type { SyncAnswer, SyncResponse, SyncStrategy } from './run-sync.js'
import { observeSync } from './sync-observer.js'
import type { SyncController, SyncObserver } from './sync-observer.js'

/** One sync of one parent (a decorator's target), as a kind hands it over. */
export interface ParentSync<
  Observed,
  Request,
  Response extends SyncResponse,
  Answer extends SyncAnswer<Response>,
> {
  readonly controller: SyncController
  /** The parent as cached when the sync began. */
  readonly parent: KubeObject
  readonly parentRef: ResourceRef
  /** The child (attachment) types by GVK key. */
  readonly types: ReadonlyMap<string, ChildType>
  /** The client the sync writes through (wrapped for the observer when there is one). */
  readonly client: ObjectClient
  /** The kind's strategy over a given client. */
  readonly strategyFor: (client: ObjectClient) => SyncStrategy<Observed, Request, Response, Answer>
  /** Where a failed sync is recorded as a `SyncError` Event on the parent. */
  readonly events: EventSink
  /** Told what the sync did; absent: nobody asks. */
  readonly onSync: SyncObserver | undefined
}

/**
 * Syncs one parent: a failure is reported on the parent ({@link reportSyncError}), the observer
 * is told what the sync did ({@link observeSync}), and the pipeline runs ({@link runSync}).
 */
export function syncParent<
  Observed,
  Request,
  Response extends SyncResponse,
  Answer extends SyncAnswer<Response>,
>(
  sync: ParentSync<Observed, Request, Response, Answer>,
  signal: AbortSignal,
  log: Logger
): Promise<Action> {
  const { controller, parent, parentRef, types } = sync
  return reportSyncError(parent, sync.events, log, () =>
    observeSync(
      sync.onSync,
      { controller, parent, parentRef, types },
      sync.client,
      sync.strategyFor,
      (strategy) => runSync(strategy, parent, signal, log)
    )
  )
}
