/**
 * The applier port of child management: how desired children are written once the deletes are
 * done. Two strategies implement it, chosen once per engine (upstream `--apply-strategy`): the
 * client-side 3-way dynamic apply ({@link dynamicApplier}) and server-side apply
 * (`ServerSideApplier`).
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { gvkKey } from '../../api/hook-model.js'
import type { ObjectClient } from '../../kube/object-client.js'
import type { ChildPlan, ChildType } from './plan-children.js'

/** The apply strategies, with upstream's flag values. */
export const APPLY_STRATEGIES = ['dynamic-apply', 'server-side-apply'] as const

/** How children are written: see {@link APPLY_STRATEGIES}. */
export type ApplyStrategy = (typeof APPLY_STRATEGIES)[number]

/** The field manager server-side apply uses unless told otherwise (upstream's default). */
export const DEFAULT_SSA_FIELD_MANAGER = 'metacontroller'

/**
 * The field manager the API server records for the engine's plain writes (POST, PUT, patches).
 *
 * @remarks
 * The engine sends no `fieldManager` on those writes, so the server derives the manager from the
 * user agent, which the engine sets to this. Server-side apply takes over the fields this manager
 * wrote on children when it migrates them from the dynamic apply.
 */
export const ENGINE_FIELD_MANAGER = 'metacontroller-ts'

/**
 * Reads an `--apply-strategy` value: empty means the default, `dynamic-apply`, as upstream.
 *
 * @throws Error naming the accepted values when the value is unknown.
 */
export function parseApplyStrategy(value: string | undefined): ApplyStrategy {
  if (value === undefined || value === '') return 'dynamic-apply'
  const found = APPLY_STRATEGIES.find((strategy) => strategy === value)
  if (found === undefined) {
    throw new Error(
      `unknown apply strategy "${value}": use ${APPLY_STRATEGIES.join(' or ')} (empty means dynamic-apply)`
    )
  }
  return found
}

/** What one {@link ChildWrite} did, for logs and tests; `undefined` when it wrote nothing. */
export type ChildWriteOutcome = 'created' | 'updated' | 'deleted' | undefined

/** One child's write, run by `manageChildren` among others, a few at a time. */
export interface ChildWrite {
  /** The child's type and key, for the result and error messages. */
  readonly label: string
  /** Writes the child; rejects with errors that are not expected races. */
  run(): Promise<ChildWriteOutcome>
}

/** What an applier needs to write: the client of the sync and where each type lives. */
export interface ChildWriteContext {
  readonly client: Pick<ObjectClient, 'create' | 'update' | 'delete'>
  /** Child types by GVK key. */
  readonly types: ReadonlyMap<string, ChildType>
  readonly call: { readonly signal?: AbortSignal }
}

/** A strategy for writing the desired children of a {@link ChildPlan}. */
export interface ChildApplier {
  readonly strategy: ApplyStrategy
  /**
   * The writes that create and update the plan's desired children.
   *
   * @remarks
   * The plan's deletes are not among them: they are the same for every strategy and run first.
   */
  writes(plan: ChildPlan, context: ChildWriteContext): readonly ChildWrite[]
  /** Tells the applier that a child it may have applied was deleted. */
  forget(type: string, object: KubeObject): void
  /**
   * Tells whether an observed child already holds what the hook desires, in this strategy's
   * terms: the rollout moves on (or adopts a child into the latest revision) only then.
   *
   * @remarks
   * Each strategy writes children differently (the dynamic apply leaves a last-applied
   * annotation, server-side apply leaves managed fields), so only the strategy that wrote a
   * child can say whether it is done with it.
   *
   * @throws Error when the observed child cannot be read for the check (e.g. an unreadable
   *   last-applied annotation); the caller treats that as not up to date.
   */
  isUpToDate(type: string, observed: KubeObject, desired: KubeObject): boolean
}

/**
 * The applier's up-to-date test keyed by the observed child's own type, as the rollout planner
 * asks it (it knows children by kind and name, not by GVK key).
 */
export function upToDateTest(
  applier: ChildApplier
): (observed: KubeObject, desired: KubeObject) => boolean {
  return (observed, desired) =>
    applier.isUpToDate(gvkKey(observed.apiVersion, observed.kind), observed, desired)
}
