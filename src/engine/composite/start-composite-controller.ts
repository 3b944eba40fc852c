import { checkParentResource, compositeKind } from './composite-kind.js'
import type { CompositeControllerDefinition, EngineContext } from '../engine-context.js'
import { ParentController } from '../loop/parent-controller.js'

/** How long a hosted controller's caches may take to sync before its start fails (2 min). */
export const CACHE_SYNC_TIMEOUT_MS = 120_000

/** A running hosted controller. */
export interface HostedController {
  readonly name: string
  stop(): Promise<void>
}

/**
 * Resolves a CompositeController's resources through discovery, checks them, and starts its
 * hosted controller; resolves once its caches are synced and workers run.
 *
 * @throws UnknownResourceError when a resource is not served (yet).
 * @throws ControllerSpecError when the parent has no status subresource.
 */
export async function startCompositeController(
  context: EngineContext,
  definition: CompositeControllerDefinition,
  signal?: AbortSignal
): Promise<HostedController> {
  const { spec } = definition
  const parent = await context.discovery.resolveResource(
    spec.parentResource.apiVersion,
    spec.parentResource.resource
  )
  checkParentResource(parent)
  const children = await Promise.all(
    spec.childResources.map(async (rule) => ({
      info: await context.discovery.resolveResource(rule.apiVersion, rule.resource),
      updateMethod: rule.updateMethod,
    }))
  )
  const log = context.log.child({ controller: definition.name })
  const kind = compositeKind({
    name: definition.name,
    controller: definition.controller,
    spec: {
      ...spec,
      // Resyncs longer than the cache flush interval fall back to it, as upstream.
      resyncPeriodMs: Math.min(spec.resyncPeriodMs ?? Infinity, context.cacheFlushIntervalMs),
    },
    parent,
    children,
    hooks: definition.hooks,
    finalizerEnabled: definition.finalizerEnabled,
    client: context.client,
    informers: context.informers,
    discovery: context.discovery,
    events: context.events,
    log,
  })
  const controller = new ParentController({
    kind,
    informers: context.informers,
    workers: context.workers,
    ...(context.metrics === undefined
      ? {}
      : { queueMetrics: context.metrics.workQueue(kind.name) }),
  })
  // A cache that never syncs (no RBAC to list a child type, an API that went away) must fail
  // this controller's start, not hold the meta-controller's worker forever.
  try {
    // Shutdown (`signal`) also ends the wait, so SIGTERM is not held up by a cache that never syncs.
    const timeout = AbortSignal.timeout(CACHE_SYNC_TIMEOUT_MS)
    await controller.start(signal === undefined ? timeout : AbortSignal.any([signal, timeout]))
  } catch (error) {
    if (error instanceof Error && error.name === 'TimeoutError') {
      throw new Error(
        `caches of ${kind.name} did not sync within ${CACHE_SYNC_TIMEOUT_MS / 1000} s; ` +
          'check that the engine may list and watch the parent and child resources',
        { cause: error }
      )
    }
    throw error
  }
  return {
    name: definition.name,
    stop: async () => {
      await controller.stop()
      await definition.hooks.close?.()
    },
  }
}
