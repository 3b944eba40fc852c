/**
 * Builds and starts the hosted controller of one CompositeController.
 *
 * @module
 */
import type { CompositeControllerDefinition, EngineContext } from '../engine-context.js'
import { startHostedController } from '../loop/start-hosted-controller.js'
import type { HostedController } from '../loop/start-hosted-controller.js'
import { CONTROLLER_REVISIONS } from '../../kube/well-known-resources.js'
import { checkParentResource, compositeKind } from './composite-kind.js'
import type { CompositeKindOptions } from './composite-kind.js'
import { usesRollingUpdates } from './sync-composite-parent.js'

/**
 * Resolves a CompositeController's resources through discovery, checks them, and starts its
 * hosted controller; resolves once its caches are synced and workers run.
 *
 * @throws UnknownResourceError when a resource is not served (yet), including the
 *   ControllerRevision CRD when a child rule rolls.
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
      statusChecks: rule.statusChecks,
    }))
  )
  if (usesRollingUpdates(children)) {
    // Rolling rules keep ControllerRevisions: without their CRD the revision cache would never
    // sync, so fail here (CreateError, retried) and name what is missing.
    await context.discovery.resolveResource(
      `${CONTROLLER_REVISIONS.group}/${CONTROLLER_REVISIONS.version}`,
      CONTROLLER_REVISIONS.resource
    )
  }
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
    applier: context.applier,
    informers: context.informers,
    discovery: context.discovery,
    events: context.events,
    log: context.log.child({ controller: definition.name }),
    revisionNamespace: context.revisionNamespace,
    ...(context.onSync === undefined ? {} : { onSync: context.onSync }),
    ...childLabelsOf(context),
  })
  return startHostedController(context, definition.name, kind, definition.hooks.close, signal)
}

/** Sharding's labels for written children (the uid key's shard bucket); none without. */
function childLabelsOf(context: EngineContext): Pick<CompositeKindOptions, 'childLabels'> {
  const childLabels = context.shard?.watches?.childLabels
  return childLabels === undefined ? {} : { childLabels: (parent) => childLabels(parent) }
}
