/**
 * Server-side apply as a {@link ChildApplier} (upstream `--apply-strategy=server-side-apply`).
 *
 * @remarks
 * Each desired child is sent as an apply patch (`application/apply-patch+yaml`) with the field
 * manager and `force=true`, as upstream (spec §4): the engine takes the fields of its
 * configuration from whoever owned them, fields it applied before and no longer applies are
 * removed by the server, and lists merge by their schema's keys. Conflicts are ignored as
 * upstream. Whether a child needs a request at all is {@link decideServerSideApply}'s decision,
 * over what this applier remembers of its last apply (one record per child, per engine).
 *
 * Recreate methods dry-run the apply first and delete the child only if the result differs from
 * the observed object, so fields other managers own never cause a recreate; a dry run the server
 * refuses (BadRequest, Forbidden) never deletes anything. InPlace methods take a child written by
 * the dynamic apply over first ({@link ServerSideApplier.migrate}).
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { objectKey } from '../../core/object-key.js'
import { controllerRefOf } from '../../core/owner-references.js'
import { ApiError, ConflictError, ForbiddenError, NotFoundError } from '../../kube/api-error.js'
import type { ObjectCallOptions, PatchOptions, ResourceRef } from '../../kube/dynamic-client.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import { silentLogger } from '../../runtime/diagnostics/logger.js'
import type {
  ChildApplier,
  ChildWrite,
  ChildWriteContext,
  ChildWriteOutcome,
} from './child-applier.js'
import { DEFAULT_SSA_FIELD_MANAGER, ENGINE_FIELD_MANAGER } from './child-applier.js'
import type { AppliedRecord } from './decide-server-side-apply.js'
import {
  applyConfiguration,
  configurationHash,
  decideServerSideApply,
  hasLastApplied,
  isAppliedIn,
  sanitizeObject,
} from './decide-server-side-apply.js'
import { deleteChild } from './delete-child.js'
import { LAST_APPLIED_ANNOTATION, isSemanticallyEqual } from './dynamic-apply.js'
import type { ChildPlan, PlannedApply } from './plan-children.js'
import { managedFieldsOf, ownedFieldsOutside, transferOwnership } from './transfer-ownership.js'

/** The reads and patches server-side apply makes; the engine's `DynamicClient` fits. */
export interface ApplyClient {
  /** Reads one object, with its `managedFields`. */
  get(ref: ResourceRef, name: string, options?: ObjectCallOptions): Promise<KubeObject>
  /** Sends an apply or JSON patch. */
  patch(ref: ResourceRef, name: string, patch: unknown, options: PatchOptions): Promise<KubeObject>
}

/** Options of {@link ServerSideApplier}. */
export interface ServerSideApplierOptions {
  /** Reads and patches children; the engine's client. */
  readonly client: ApplyClient
  /** The field manager (upstream `--apply-strategy-ssa-field-manager`, `metacontroller`). */
  readonly fieldManager?: string
  readonly log?: Logger
}

/** One child about to be written, with what its write needs. */
interface ApplyJob {
  readonly entry: PlannedApply
  readonly ref: ResourceRef
  readonly config: KubeObject
  readonly hash: string
  readonly recordKey: string
  readonly context: ChildWriteContext
}

const JSON_POINTER_LAST_APPLIED = `/metadata/annotations/${LAST_APPLIED_ANNOTATION.replace('/', '~1')}`

/** Writes children with server-side apply; see the module notes. */
export class ServerSideApplier implements ChildApplier {
  /** Always `server-side-apply`. */
  readonly strategy = 'server-side-apply'
  /** The field manager the engine applies as. */
  readonly fieldManager: string
  readonly #client: ApplyClient
  readonly #log: Logger
  /** What was last applied to each child, by type and key. */
  readonly #records = new Map<string, AppliedRecord>()

  constructor(options: ServerSideApplierOptions) {
    this.#client = options.client
    this.fieldManager = options.fieldManager ?? DEFAULT_SSA_FIELD_MANAGER
    this.#log = options.log ?? silentLogger
  }

  /** One apply per desired child of the plan; most decide on the spot that nothing is needed. */
  writes(plan: ChildPlan, context: ChildWriteContext): readonly ChildWrite[] {
    const writes: ChildWrite[] = []
    for (const entry of plan.apply) {
      const ref = context.types.get(entry.type)?.ref
      if (ref === undefined) continue
      const config = applyConfiguration(entry.desired, plan.controllerRef)
      const job: ApplyJob = {
        entry,
        ref,
        config,
        hash: configurationHash(config),
        recordKey: `${entry.type} ${entry.key}`,
        context,
      }
      writes.push({ label: `${entry.type} ${entry.key}`, run: () => this.#write(job) })
    }
    return writes
  }

  /** Drops the record of a deleted child. */
  forget(type: string, object: KubeObject): void {
    this.#records.delete(`${type} ${objectKey(object)}`)
  }

  /**
   * Up to date when every field of the configuration holds its value in the child, and, when
   * this process applied to the child at its observed `resourceVersion`, what it applied is the
   * configuration asked for now.
   *
   * @remarks
   * The record catches what the field comparison cannot: a field the new configuration drops is
   * still on the child until the configuration is applied (the server removes it then).
   */
  isUpToDate(type: string, observed: KubeObject, desired: KubeObject): boolean {
    if (!isAppliedIn(sanitizeObject(desired), observed)) return false
    const record = this.#records.get(`${type} ${objectKey(observed)}`)
    const owner = controllerRefOf(observed)
    if (
      record === undefined ||
      owner === undefined ||
      record.uid !== observed.metadata.uid ||
      record.resourceVersion !== observed.metadata.resourceVersion
    ) {
      return true
    }
    return record.hash === configurationHash(applyConfiguration(desired, owner))
  }

  async #write(job: ApplyJob): Promise<ChildWriteOutcome> {
    const { observed } = job.entry
    const record = this.#records.get(job.recordKey)
    const decision = decideServerSideApply({
      observed,
      config: job.config,
      hash: job.hash,
      record,
      method: job.entry.method,
    })
    this.#log.debug('server-side apply decision', {
      child: job.recordKey,
      decision: decision.op === 'skip' ? `skip ${decision.reason}` : decision.op,
    })
    switch (decision.op) {
      case 'skip':
        if (decision.reason === 'InSync' && record !== undefined && observed !== undefined) {
          this.#remember(job, observed)
        }
        return undefined
      case 'create':
        return (await this.#apply(job)) ? 'created' : undefined
      case 'migrate':
        if (observed === undefined || !(await this.migrate(job.ref, observed, job.context)))
          return undefined
        return (await this.#apply(job)) ? 'updated' : undefined
      case 'apply':
        return (await this.#apply(job)) ? 'updated' : undefined
      case 'dry-run':
        return observed === undefined ? undefined : this.#recreateIfChanged(job, observed)
      case 'verify':
        return observed === undefined ? undefined : this.#verify(job, observed)
      default: {
        const unreachable: never = decision
        throw new Error(`unknown apply decision ${String(unreachable)}`)
      }
    }
  }

  #remember(job: ApplyJob, object: KubeObject, appliedOver?: string): void {
    this.#records.set(job.recordKey, {
      uid: object.metadata.uid ?? '',
      hash: job.hash,
      resourceVersion: object.metadata.resourceVersion ?? '',
      ...(appliedOver === undefined ? {} : { appliedOver }),
    })
  }

  #patchOptions(job: ApplyJob, dryRun: boolean): PatchOptions {
    return {
      type: 'apply',
      fieldManager: this.fieldManager,
      force: true,
      dryRun,
      ...job.context.call,
      ...(job.config.metadata.namespace === undefined
        ? {}
        : { namespace: job.config.metadata.namespace }),
    }
  }

  /** Applies the configuration; false when a conflict (ignored, as upstream) stopped it. */
  async #apply(job: ApplyJob): Promise<boolean> {
    let applied: KubeObject
    try {
      applied = await this.#client.patch(
        job.ref,
        job.config.metadata.name ?? '',
        job.config,
        this.#patchOptions(job, false)
      )
    } catch (error) {
      if (error instanceof ConflictError) return false
      throw error
    }
    const over = job.entry.observed?.metadata.resourceVersion
    this.#remember(job, applied, over === applied.metadata.resourceVersion ? undefined : over)
    return true
  }

  /** Recreate methods: delete the child only if applying would change it. */
  async #recreateIfChanged(job: ApplyJob, observed: KubeObject): Promise<ChildWriteOutcome> {
    let result: KubeObject
    try {
      result = await this.#client.patch(
        job.ref,
        job.config.metadata.name ?? '',
        job.config,
        this.#patchOptions(job, true)
      )
    } catch (error) {
      // A configuration the server refuses must never cost the child its life.
      // Invalid (422) is not among them, as upstream: it fails the sync, which is retried.
      if (error instanceof ForbiddenError || isBadRequest(error)) {
        this.#log.warn('server-side apply dry run refused; the child is left alone', {
          child: job.recordKey,
          error,
        })
        this.#remember(job, observed)
        return undefined
      }
      throw error
    }
    if (result.metadata.uid !== observed.metadata.uid) {
      throw new Error(
        `${job.recordKey} was replaced while it was being checked; it is synced again on the next event`
      )
    }
    // A dry run answers with the live resourceVersion. Another one means the cached copy is behind
    // the server: comparing with it could recreate a child for someone else's write. The newer
    // version's event syncs the child again.
    if (result.metadata.resourceVersion !== observed.metadata.resourceVersion) return undefined
    if (isSemanticallyEqual(sanitizeObject(result), sanitizeObject(observed))) {
      this.#remember(job, observed)
      return undefined
    }
    this.#records.delete(job.recordKey)
    try {
      await deleteChild(job.context.client, job.ref, observed, job.context.call)
      return 'deleted'
    } catch (error) {
      if (error instanceof NotFoundError) return undefined
      throw error
    }
  }

  /**
   * The fields hold the configuration but no record says this process applied it (a restart):
   * skip only when the field manager owns nothing the configuration no longer sets.
   */
  async #verify(job: ApplyJob, observed: KubeObject): Promise<ChildWriteOutcome> {
    let live: KubeObject
    try {
      live = await this.#client.get(job.ref, observed.metadata.name ?? '', {
        ...job.context.call,
        ...(observed.metadata.namespace === undefined
          ? {}
          : { namespace: observed.metadata.namespace }),
      })
    } catch (error) {
      if (error instanceof NotFoundError) return undefined
      throw error
    }
    const entries = managedFieldsOf(live.metadata)
    const owns = entries.some((e) => e.manager === this.fieldManager && e.operation === 'Apply')
    if (owns && ownedFieldsOutside(job.config, entries, this.fieldManager).length === 0) {
      this.#remember(job, observed)
      return undefined
    }
    const inPlace = job.entry.method === 'InPlace' || job.entry.method === 'RollingInPlace'
    if (!inPlace) return this.#recreateIfChanged(job, observed)
    return (await this.#apply(job)) ? 'updated' : undefined
  }

  /**
   * Takes a child written by the dynamic apply over: removes its last-applied annotation and
   * makes the field manager the owner of what the engine's plain writes owned
   * ({@link transferOwnership}), in one JSON patch guarded by the `resourceVersion`.
   *
   * @remarks
   * No delete, no recreate: the child keeps its UID and content; the apply that follows then
   * removes only fields the engine set and no longer desires. Returns false when the child is
   * gone. Managed fields are read live, since the informers' copies carry none.
   */
  async migrate(
    ref: ResourceRef,
    observed: KubeObject,
    context: ChildWriteContext
  ): Promise<boolean> {
    const namespace = observed.metadata.namespace
    const call = { ...context.call, ...(namespace === undefined ? {} : { namespace }) }
    try {
      const live = await this.#client.get(ref, observed.metadata.name ?? '', call)
      if (live.metadata.uid !== observed.metadata.uid) return false
      if (!hasLastApplied(live)) return true
      const managers = new Set([ENGINE_FIELD_MANAGER, this.fieldManager])
      const entries = transferOwnership(managedFieldsOf(live.metadata), managers, this.fieldManager)
      await this.#client.patch(
        ref,
        live.metadata.name ?? '',
        [
          { op: 'test', path: '/metadata/resourceVersion', value: live.metadata.resourceVersion },
          { op: 'remove', path: JSON_POINTER_LAST_APPLIED },
          ...(entries === undefined
            ? []
            : [{ op: 'replace', path: '/metadata/managedFields', value: entries }]),
        ],
        { type: 'json', ...call }
      )
      this.#log.debug('took a child over from the dynamic apply', {
        child: `${ref.resource} ${observed.metadata.name ?? ''}`,
      })
      return true
    } catch (error) {
      if (error instanceof NotFoundError) return false
      throw error
    }
  }
}

function isBadRequest(error: unknown): boolean {
  return error instanceof ApiError && error.statusCode === 400
}
