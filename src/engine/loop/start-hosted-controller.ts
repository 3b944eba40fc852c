/**
 * Starts the generic parent loop for a kind: the part of a hosted controller's start that both
 * controller kinds share.
 *
 * @module
 */
import type { EngineContext } from '../engine-context.js'
import type { ControllerKind } from './parent-controller.js'
import { ParentController } from './parent-controller.js'
import { hookMetricsFor } from '../metrics/hook-metrics.js'
import { patchSyncResult } from './sync-request-recorder.js'
import { CacheSyncStalledError } from '../../runtime/informers/wait-for-sync-progress.js'

/**
 * How long a hosted controller's cache may receive nothing from the API server before its first
 * sync, until its start fails (2 min). A cache that keeps receiving list pages may take longer:
 * 100,000 parents take minutes on a loaded machine, and starting over would only list them again.
 */
export const CACHE_SYNC_STALL_MS = 120_000

/** How long releasing a deleted controller's finalizers may take before it is given up (1 min). */
export const RELEASE_TIMEOUT_MS = 60_000

/** A running hosted controller. */
export interface HostedController {
  readonly name: string
  /** Undoes what it put on parents, when its controller object was deleted (before `stop`). */
  release(): Promise<void>
  stop(): Promise<void>
}

/**
 * Runs a kind on the generic parent loop; resolves once its caches are synced and its workers
 * run.
 *
 * @param close - Releases what the kind's hooks hold, after the loop stopped.
 * @throws Error when a cache stalls before its first sync (see {@link CACHE_SYNC_STALL_MS}).
 */
export async function startHostedController(
  context: EngineContext,
  name: string,
  kind: ControllerKind,
  close: (() => Promise<void>) | undefined,
  signal?: AbortSignal
): Promise<HostedController> {
  const controller = new ParentController({
    kind,
    informers: context.informers,
    ...(context.shardedInformers === undefined
      ? {}
      : { shardedInformers: context.shardedInformers }),
    ...(context.childInformers === undefined ? {} : { childInformers: context.childInformers }),
    workers: context.workers,
    ...(context.leading === undefined ? {} : { gate: context.leading }),
    ...(context.shard === undefined ? {} : { shard: context.shard }),
    cacheSyncStallMs: CACHE_SYNC_STALL_MS,
    syncResults: patchSyncResult(context.client, context.log.child({ controller: name })),
    stallWatch: {
      log: context.log.child({ controller: name }),
      ...(context.metrics === undefined ? {} : { metrics: context.metrics.queueStall(kind.name) }),
    },
    ...(context.metrics === undefined
      ? {}
      : {
          queueMetrics: context.metrics.workQueue(kind.name),
          // controller_runtime_reconcile_* per hosted controller, named as its queue.
          observer: hookMetricsFor(context.metrics.registry).reconcileObserver(
            kind.name,
            context.workers
          ),
        }),
  })
  // A cache that never syncs (no RBAC to list a child type, an API that went away) must fail
  // this controller's start, not hold the meta-controller's worker forever; shutdown (`signal`)
  // also ends the wait, so SIGTERM is not held up.
  try {
    await controller.start(signal)
  } catch (error) {
    await close?.()
    if (error instanceof CacheSyncStalledError) {
      throw new Error(
        `caches of ${kind.name} did not sync: ${error.message}; ` +
          'check that the engine may list and watch the parent and child resources',
        { cause: error }
      )
    }
    throw error
  }
  return {
    name,
    release: () => controller.release(AbortSignal.timeout(RELEASE_TIMEOUT_MS)),
    stop: async () => {
      await controller.stop()
      await close?.()
    },
  }
}
