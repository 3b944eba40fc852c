/**
 * The rollout step of a CompositeController sync (spec §3.11): claims the parent's
 * ControllerRevisions, calls the hook once per revision, and plans the pass
 * ({@link assembleRollout}); {@link writeRevisions} then records the result before any child
 * is touched.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { controllerRefOf } from '../../core/owner-references.js'
import type { CompositeSyncResponse, ObjectsByType } from '../../api/hook-model.js'
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../kube/api-error.js'
import type { ObjectClient } from '../../kube/object-client.js'
import type { ResourceInfo } from '../../kube/resource-map.js'
import { CONTROLLER_REVISIONS } from '../../kube/well-known-resources.js'
import type { ObjectReader } from '../../runtime/informers/object-store.js'
import { NotSyncedError } from '../../runtime/queue/reconcile-errors.js'
import { claimChildren } from '../children/claim-children.js'
import { prepareDesiredChildren } from '../../api/desired-children.js'
import type { DesiredChildrenRules } from '../../api/desired-children.js'
import type { RevisionAnswer, RevisionWrites, RolloutOutcome } from './assemble-rollout.js'
import { assembleRollout } from './assemble-rollout.js'
import type { ControllerRevision } from './controller-revision.js'
import {
  asControllerRevision,
  REVISION_API_GROUP_LABEL,
  REVISION_RESOURCE_LABEL,
} from './controller-revision.js'
import type { RevisionSettings } from './parent-revisions.js'
import { parentRevisions } from './parent-revisions.js'
import type { ChildUpToDate, RolloutChildRule } from './plan-rollout.js'

/** Everything the rollout step needs besides the parent. */
export interface RolloutContext {
  readonly client: Pick<ObjectClient, 'get' | 'create' | 'update' | 'updateStatus' | 'delete'>
  readonly parentInfo: ResourceInfo
  /** The ControllerRevision cache. */
  readonly revisions: ObjectReader
  /** Names, labels, field paths and home of the parent's revisions. */
  readonly settings: RevisionSettings
  /** The parent's selector (revisions are adopted by it, plus the group and resource labels). */
  readonly matchesSelector: (labels: Readonly<Record<string, string>>) => boolean
  /** The rules desired children must follow (checked for every revision's answer). */
  readonly childRules: DesiredChildrenRules
  /** The child rules by `Kind.group` key. */
  readonly rolloutRules: ReadonlyMap<string, RolloutChildRule>
  /** The active apply strategy's up-to-date test (see `RolloutInput.isUpToDate`). */
  readonly isUpToDate: ChildUpToDate
  readonly signal?: AbortSignal
}

/**
 * Returns the parent's ControllerRevisions: those it controls, as they are (their labels are the
 * engine's own, so unlike upstream they are never released), and orphans that match its
 * selector and its group and resource labels, adopted as upstream.
 */
export async function claimRevisions(
  context: RolloutContext,
  parent: KubeObject
): Promise<ControllerRevision[]> {
  const uid = parent.metadata.uid ?? ''
  const { namespace, parentGroup, parentResource } = context.settings
  const inHome = context.revisions.listByNamespace(namespace)
  const owned = inHome.filter((r) => controllerRefOf(r)?.uid === uid)
  const orphans = inHome.filter((r) => controllerRefOf(r) === undefined)
  const adopted = await claimChildren(
    {
      client: context.client,
      parent,
      parentRef: context.parentInfo.ref,
      parentApiVersion: context.parentInfo.apiVersion,
      parentKind: context.parentInfo.kind,
      matches: (labels) =>
        labels[REVISION_API_GROUP_LABEL] === parentGroup &&
        labels[REVISION_RESOURCE_LABEL] === parentResource &&
        context.matchesSelector(labels),
      ...(context.signal === undefined ? {} : { signal: context.signal }),
    },
    CONTROLLER_REVISIONS,
    // Revisions of a cluster-scoped parent live in a namespace the claim rules do not check.
    orphans
  )
  return [...owned, ...adopted]
    .map(asControllerRevision)
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))
}

/** Calls the hook for one parent state: the current one, or a revision's historical one. */
export type RevisionHook = (parent: KubeObject) => Promise<CompositeSyncResponse>

/**
 * Runs the rollout step: claims the revisions, calls the hook for every revision at once (any
 * failure fails the sync before anything is written), checks each answer's children, and plans
 * the pass.
 *
 * @throws the first hook error, or `InvalidDesiredChildError` for any revision's bad child.
 */
export async function syncRollout(
  context: RolloutContext,
  parent: KubeObject,
  observed: ObjectsByType,
  hook: RevisionHook
): Promise<RolloutOutcome & { readonly observedRevisions: readonly ControllerRevision[] }> {
  const observedRevisions = await claimRevisions(context, parent)
  const revisions = parentRevisions(parent, observedRevisions, context.settings)
  const responses = await Promise.all(revisions.map((revision) => hook(revision.parent)))
  const answers: RevisionAnswer[] = revisions.map((revision, index) => {
    const response = responses[index]
    if (response === undefined) throw new Error(`no hook answer for revision ${String(index)}`)
    return {
      revision,
      response,
      desired: prepareDesiredChildren(response.children, { ...context.childRules, parent }),
    }
  })
  const outcome = assembleRollout(
    parent,
    answers,
    observed,
    context.rolloutRules,
    observedRevisions,
    context.isUpToDate
  )
  return { ...outcome, observedRevisions }
}

/**
 * Writes the ControllerRevision changes: deletes (UID precondition), then updates, then creates.
 * A revision already deleted or already created counts as done.
 *
 * @throws NotSyncedError when an update conflicts: the revision cache is behind the engine's own
 *   last write, so the sync is retried (with backoff, without a SyncError event).
 */
export async function writeRevisions(
  client: Pick<ObjectClient, 'create' | 'update' | 'delete'>,
  writes: RevisionWrites,
  signal?: AbortSignal
): Promise<void> {
  const call = signal === undefined ? {} : { signal }
  for (const revision of writes.delete) {
    try {
      await client.delete(CONTROLLER_REVISIONS, revision.metadata.name ?? '', {
        ...call,
        ...(revision.metadata.namespace === undefined
          ? {}
          : { namespace: revision.metadata.namespace }),
        ...(revision.metadata.uid === undefined
          ? {}
          : { preconditions: { uid: revision.metadata.uid } }),
      })
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error
    }
  }
  for (const revision of writes.update) {
    try {
      await client.update(CONTROLLER_REVISIONS, revision, {
        ...call,
        namespace: revision.metadata.namespace ?? '',
      })
    } catch (error) {
      // Our own earlier write has not reached the cache yet: retry once it has, without the
      // SyncError event a real failure gets.
      if (!(error instanceof ConflictError)) throw error
      throw new NotSyncedError(
        `ControllerRevision ${revision.metadata.name ?? ''} changed since it was cached`,
        { cause: error }
      )
    }
  }
  for (const revision of writes.create) {
    try {
      await client.create(CONTROLLER_REVISIONS, revision, {
        ...call,
        namespace: revision.metadata.namespace ?? '',
      })
    } catch (error) {
      if (!(error instanceof AlreadyExistsError)) throw error
    }
  }
}
