/**
 * The CompositeController strategy of the generic parent loop: which parents and children to
 * watch, how their events map to parent keys, and which pipeline syncs a key
 * ({@link compositeStrategy} through {@link syncParent}).
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { compileLabelSelector } from '../../core/label-selector.js'
import { keyOf, objectKey } from '../../core/object-key.js'
import { controllerRefOf, groupOf, isDeleting } from '../../core/owner-references.js'
import type { CompositeControllerSpec } from '../../api/composite-controller-spec.js'
import { ControllerSpecError } from '../../api/controller-spec-error.js'
import type { CompositeHooks } from '../../api/controller-hooks.js'
import { gvkKey } from '../../api/hook-model.js'
import type { Discovery } from '../../kube/discovery.js'
import type { ObjectClient } from '../../kube/object-client.js'
import type { ResourceInfo } from '../../kube/resource-map.js'
import { CONTROLLER_REVISIONS } from '../../kube/well-known-resources.js'
import { Action } from '../../runtime/queue/controller-loop.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import type { SharedInformers } from '../../runtime/informers/shared-informers.js'
import { RelatedObjectsManager } from '../customize/related-objects-manager.js'
import type { EventSink } from '../events/event-recorder.js'
import type { ControllerCaches, ControllerKind, WatchSource } from '../loop/parent-controller.js'
import { cachesByRole } from '../loop/caches-by-role.js'
import { hasFinalizer } from '../sync/finalizer-step.js'
import { isStatusOnlyUpdate } from '../loop/status-only-update.js'
import type { ChildApplier } from '../children/child-applier.js'
import type { ChildType } from '../children/plan-children.js'
import { compositeSelector } from './composite-selector.js'
import { compositeStrategy, usesRollingUpdates } from './sync-composite-parent.js'
import { syncParent } from '../sync/sync-parent.js'
import type { SyncObserver } from '../sync/sync-observer.js'
import type {
  CompositeCaches,
  CompositeController,
  CompositeWrites,
  ResolvedChild,
} from './sync-composite-parent.js'

/** Everything a composite controller needs, resolved when it is built. */
export interface CompositeKindOptions {
  /** The CompositeController's name. */
  readonly name: string
  /** The CompositeController object sent to hooks as `controller`. */
  readonly controller: KubeObject
  readonly spec: CompositeControllerSpec
  readonly parent: ResourceInfo
  readonly children: readonly ResolvedChild[]
  readonly hooks: CompositeHooks
  /** Whether a finalizer is put on parents (upstream: `hooks.finalize` is present). */
  readonly finalizerEnabled: boolean
  readonly client: ObjectClient
  /** How desired children are written; the dynamic apply when absent. */
  readonly applier?: ChildApplier
  /** Where related informers come from (customize only). */
  readonly informers: Pick<SharedInformers, 'acquire'>
  /** Resolves the resources related rules name (customize only). */
  readonly discovery: Pick<Discovery, 'resolveResource'>
  readonly events: EventSink
  readonly log: Logger
  /** Where the ControllerRevisions of cluster-scoped parents live. */
  readonly revisionNamespace: string
  /** Told what each sync did; absent: nobody asks. */
  readonly onSync?: SyncObserver
}

/** Returns the finalizer a CompositeController puts on its parents. */
export function compositeFinalizer(name: string): string {
  return `metacontroller.io/compositecontroller-${name}`
}

/**
 * Maps a child's event to the parents it concerns: its controller, when that is an in-scope parent
 * with the same UID; for an orphan, every in-scope parent whose selector matches it (it may be
 * adopted), except on delete.
 */
export function compositeChildKeys(
  spec: CompositeControllerSpec,
  parentInfo: ResourceInfo,
  isInScope: (parent: KubeObject) => boolean
): ControllerKind['childKeys'] {
  const parentsOf = (caches: ControllerCaches) => caches.parents[0]?.store
  const orphanKeys = (child: KubeObject, caches: ControllerCaches): string[] => {
    const parents = parentsOf(caches)
    const namespace = child.metadata.namespace
    const candidates =
      parents === undefined
        ? []
        : parentInfo.ref.namespaced && namespace !== undefined && namespace !== ''
          ? parents.listByNamespace(namespace)
          : parents.list()
    return candidates
      .filter((parent) => {
        try {
          return (
            isInScope(parent) &&
            compositeSelector(spec, parent).matches(child.metadata.labels ?? {})
          )
        } catch {
          // A parent with an invalid selector adopts nothing; its own sync reports why.
          return false
        }
      })
      .map(objectKey)
  }
  return (child, change, old, caches) => {
    if (change === 'update' && old?.metadata.resourceVersion === child.metadata.resourceVersion)
      return []
    const ref = controllerRefOf(child)
    if (ref === undefined) {
      return change === 'delete' || isDeleting(child) ? [] : orphanKeys(child, caches)
    }
    if (ref.kind !== parentInfo.kind || groupOf(ref.apiVersion) !== groupOf(parentInfo.apiVersion))
      return []
    const key = keyOf(parentInfo.ref.namespaced ? child.metadata.namespace : undefined, ref.name)
    const parent = parentsOf(caches)?.get(key)
    return parent?.metadata.uid === ref.uid && isInScope(parent) ? [key] : []
  }
}

/** The role of a composite child source: a child rule's GVK key, or the revisions. */
type CompositeSourceRole = string

/**
 * The child sources of a composite controller, each with its role: one per child rule (named by
 * its GVK key) and, when a rule rolls, the ControllerRevisions. Revisions are only read from
 * their cache: their changes are the engine's own writes and trigger no sync (as upstream, whose
 * revision informer has no handlers).
 */
export function compositeChildSources(
  children: readonly ResolvedChild[]
): (WatchSource & { readonly role: CompositeSourceRole })[] {
  return [
    ...children.map((c) => ({ role: gvkKey(c.info.apiVersion, c.info.kind), ref: c.info.ref })),
    ...(usesRollingUpdates(children)
      ? [{ role: REVISIONS_ROLE, ref: CONTROLLER_REVISIONS, passive: true }]
      : []),
  ]
}

const REVISIONS_ROLE = 'controllerrevisions'

/** The caches of a sync by role, from the sources {@link compositeChildSources} declared. */
export function compositeCaches(
  sources: readonly { readonly role: CompositeSourceRole }[],
  caches: ControllerCaches
): CompositeCaches {
  const byRole = cachesByRole(sources, caches.children)
  const children = new Map(byRole)
  children.delete(REVISIONS_ROLE)
  return { children, revisions: byRole.get(REVISIONS_ROLE) }
}

/** The controller and write settings the composite strategy syncs with. */
function compositeSetup(
  options: CompositeKindOptions,
  finalizer: string,
  matchesScope: (parent: KubeObject) => boolean
): { controller: CompositeController; writes: CompositeWrites } {
  const { spec, parent } = options
  const related =
    options.hooks.customize === undefined
      ? undefined
      : new RelatedObjectsManager({
          controller: options.controller,
          customize: options.hooks.customize,
          customizeVersion: spec.hooks.customize?.version ?? 'v1',
          parentNamespaced: parent.ref.namespaced,
          informers: options.informers,
          discovery: options.discovery,
          log: options.log,
        })
  const controller: CompositeController = {
    object: options.controller,
    spec,
    parent,
    children: options.children,
    hooks: options.hooks,
    finalizerEnabled: options.finalizerEnabled,
    finalizer,
    matchesScope,
    related,
  }
  const writes: CompositeWrites = {
    client: options.client,
    ...(options.applier === undefined ? {} : { applier: options.applier }),
    events: options.events,
    revisionNamespace: options.revisionNamespace,
  }
  return { controller, writes }
}

/** Builds a CompositeController's {@link ControllerKind}. */
export function compositeKind(options: CompositeKindOptions): ControllerKind {
  const { spec, parent: parentInfo } = options
  const finalizer = compositeFinalizer(options.name)
  const scopeMatcher = compileLabelSelector(spec.parentResource.labelSelector)
  const matchesScope = (parent: KubeObject): boolean => scopeMatcher(parent.metadata.labels ?? {})
  const isInScope = (parent: KubeObject): boolean =>
    hasFinalizer(parent, finalizer) || matchesScope(parent)
  const parentsOf = (caches: ControllerCaches) => caches.parents[0]?.store
  const { controller, writes } = compositeSetup(options, finalizer, matchesScope)
  const { related } = controller
  const childSources = compositeChildSources(options.children)
  const childKeys = compositeChildKeys(spec, parentInfo, isInScope)
  const types = compositeChildTypes(options.children)

  return {
    name: `CompositeController-${options.name}`,
    parentSources: [{ ref: parentInfo.ref }],
    childSources,
    resyncPeriodMs: spec.resyncPeriodMs,

    parentKeys(parent, old) {
      if (!isInScope(parent)) return []
      if (
        old !== undefined &&
        spec.parentResource.ignoreStatusChanges &&
        isStatusOnlyUpdate(old, parent)
      )
        return []
      return [objectKey(parent)]
    },

    childKeys,
    parentOf: (key, caches) => parentsOf(caches)?.get(key),

    allParentKeys(caches) {
      return (parentsOf(caches)?.list() ?? []).filter(isInScope).map(objectKey)
    },

    start(runtime) {
      related?.bind({
        // Only in-scope parents: upstream wakes every cached parent, whose sync then skips it.
        list: () => (parentsOf(runtime.caches)?.list() ?? []).filter(isInScope),
        enqueue: (parent) => {
          runtime.enqueue([objectKey(parent)])
        },
      })
    },

    async stop() {
      await related?.stop()
    },

    async sync(key, context, caches) {
      const cached = parentsOf(caches)?.get(key)
      if (cached === undefined) return Action.awaitChange()
      const log = options.log.child({ parent: key })
      const childCaches = compositeCaches(childSources, caches)
      const sync = {
        controller: { kind: 'CompositeController' as const, name: options.name },
        parent: cached,
        parentRef: parentInfo.ref,
        types,
        client: writes.client,
        strategyFor: (client: ObjectClient) =>
          compositeStrategy(controller, { ...writes, client }, childCaches),
        events: options.events,
        onSync: options.onSync,
      }
      return syncParent(sync, context.signal, log)
    },
  }
}

/** The child types of a controller by GVK key, as the sync's plan names them. */
function compositeChildTypes(children: readonly ResolvedChild[]): Map<string, ChildType> {
  return new Map(
    children.map((c) => [
      gvkKey(c.info.apiVersion, c.info.kind),
      { ref: c.info.ref, updateMethod: c.updateMethod },
    ])
  )
}

/** Checks a parent resource can be used: upstream requires a CRD with a status subresource. */
export function checkParentResource(parent: ResourceInfo): void {
  if (!parent.subresources.includes('status')) {
    throw new ControllerSpecError(
      'spec.parentResource',
      `${parent.ref.resource}.${parent.ref.group} (${parent.apiVersion}) does not have subresource 'Status' enabled`
    )
  }
}
