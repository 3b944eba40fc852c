/**
 * Brings observed children to the desired state: deletes first, then creates and updates, with
 * the client-side 3-way apply and the per-type update strategy.
 *
 * @remarks
 * Upstream order and rules (spec §3.8): deletes carry a UID precondition and Background
 * propagation and skip objects already being deleted; creates carry the last-applied annotation
 * and the controller reference; an update is written only when the merged object differs from
 * the observed one; OnDelete never updates, Recreate deletes (the next sync creates), InPlace
 * PUTs the merged object. NotFound, Conflict and AlreadyExists are expected races and ignored;
 * other errors are collected so that one failing child does not block the others.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import { makeControllerRef, isDeleting } from '../core/owner-references.js'
import { AlreadyExistsError, ConflictError, NotFoundError } from '../kube/api-error.js'
import type { DynamicClient, ResourceRef } from '../kube/dynamic-client.js'
import type { ObjectsByType } from '../api/hook-model.js'
import type { UpdateMethod } from '../api/composite-controller-spec.js'
import { applyUpdate, isSemanticallyEqual, setLastApplied } from './dynamic-apply.js'
import type { DesiredChildren } from './desired-children.js'

/** A declared child type: where to write it and how to update it. */
export interface ChildType {
  readonly ref: ResourceRef
  readonly updateMethod: UpdateMethod
}

/** What {@link manageChildren} did, for logs and tests. */
export interface ManageResult {
  readonly created: string[]
  readonly updated: string[]
  readonly deleted: string[]
}

/** Options of {@link manageChildren}. */
export interface ManageChildrenOptions {
  readonly client: DynamicClient
  readonly parent: KubeObject
  /** Child types by GVK key. */
  readonly types: ReadonlyMap<string, ChildType>
  readonly signal?: AbortSignal
}

function ignore(error: unknown, ...kinds: (new (...args: never[]) => Error)[]): void {
  if (kinds.some((kind) => error instanceof kind)) return
  throw error
}

function label(type: string, key: string): string {
  return `${type} ${key}`
}

/**
 * Deletes, creates and updates children so that observed matches desired.
 *
 * @throws AggregateError with every error that was not an expected race.
 */
export async function manageChildren(
  observed: ObjectsByType,
  desired: DesiredChildren,
  options: ManageChildrenOptions
): Promise<ManageResult> {
  const { client, parent } = options
  const result: ManageResult = { created: [], updated: [], deleted: [] }
  const errors: unknown[] = []
  const call = options.signal === undefined ? {} : { signal: options.signal }
  const run = async (what: () => Promise<void>): Promise<void> => {
    try {
      await what()
    } catch (error) {
      errors.push(error)
    }
  }

  for (const type of [...observed.keys()].sort()) {
    const childType = options.types.get(type)
    if (childType === undefined) continue
    const wanted = desired.get(type)
    for (const [key, child] of observed.get(type) ?? []) {
      if (wanted?.has(key) === true || isDeleting(child)) continue
      await run(async () => {
        try {
          await deleteChild(client, childType.ref, child, call)
          result.deleted.push(label(type, key))
        } catch (error) {
          ignore(error, NotFoundError)
        }
      })
    }
  }

  for (const [type, children] of desired) {
    const childType = options.types.get(type)
    if (childType === undefined) continue
    const seen = observed.get(type)
    for (const [key, want] of children) {
      const have = seen?.get(key)
      await run(async () => {
        if (have === undefined) {
          const object = setLastApplied(want)
          const owners = object.metadata.ownerReferences ?? []
          if (!owners.some((r) => r.uid === parent.metadata.uid)) {
            object.metadata.ownerReferences = [...owners, makeControllerRef(parent)]
          }
          try {
            await client.create(childType.ref, object, call)
            result.created.push(label(type, key))
          } catch (error) {
            ignore(error, AlreadyExistsError)
          }
          return
        }
        const merged = applyUpdate(have, want)
        if (isSemanticallyEqual(merged, have) || isDeleting(have)) return
        switch (childType.updateMethod) {
          case 'OnDelete':
            return
          case 'Recreate':
          case 'RollingRecreate':
            try {
              await deleteChild(client, childType.ref, have, call)
              result.deleted.push(label(type, key))
            } catch (error) {
              ignore(error, NotFoundError)
            }
            return
          case 'InPlace':
          case 'RollingInPlace':
            try {
              await client.update(childType.ref, merged, call)
              result.updated.push(label(type, key))
            } catch (error) {
              ignore(error, NotFoundError, ConflictError)
            }
            return
          default: {
            const unreachable: never = childType.updateMethod
            throw new Error(`unknown update method ${String(unreachable)}`)
          }
        }
      })
    }
  }
  if (errors.length > 0) {
    throw new AggregateError(
      errors,
      `cannot manage children: ${errors.map((e) => (e instanceof Error ? e.message : String(e))).join('; ')}`
    )
  }
  return result
}

async function deleteChild(
  client: DynamicClient,
  ref: ResourceRef,
  child: KubeObject,
  call: { signal?: AbortSignal }
): Promise<void> {
  await client.delete(ref, child.metadata.name ?? '', {
    ...call,
    ...(child.metadata.namespace === undefined ? {} : { namespace: child.metadata.namespace }),
    // A UID precondition: never delete a same-named object someone created meanwhile.
    ...(child.metadata.uid === undefined ? {} : { preconditions: { uid: child.metadata.uid } }),
    // Background, so that dependents of the child (a Job's Pods) are collected, not orphaned.
    propagationPolicy: 'Background',
  })
}
