/**
 * Claims children for a parent the way Kubernetes' ControllerRefManager does: adopt matching
 * orphans, keep owned children that match, release owned children that no longer match.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { controllerRefOf, isDeleting } from '../../core/owner-references.js'
import type { OwnerReference } from '../../core/kube-object.js'
import { NotFoundError } from '../../kube/api-error.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import type { ObjectClient } from '../../kube/object-client.js'
import type { ObjectReader } from '../../runtime/object-store.js'
import { updateLive } from './live-update.js'

/** What {@link claimChildren} needs. */
export interface ClaimContext {
  readonly client: Pick<ObjectClient, 'get' | 'update' | 'updateStatus'>
  readonly parent: KubeObject
  readonly parentRef: ResourceRef
  /** apiVersion and kind the adopted children's controller reference names (from discovery). */
  readonly parentApiVersion: string
  readonly parentKind: string
  readonly matches: (labels: Readonly<Record<string, string>>) => boolean
  readonly signal?: AbortSignal
}

/** Lists the candidates of one child rule: owned by the parent, or orphans in its namespace. */
export function claimCandidates(store: ObjectReader, parent: KubeObject): KubeObject[] {
  const uid = parent.metadata.uid ?? ''
  const namespace = parent.metadata.namespace
  const pool =
    namespace === undefined || namespace === '' ? store.list() : store.listByNamespace(namespace)
  const seen = new Set<string>()
  const out: KubeObject[] = []
  for (const object of [
    ...store.listByControllerUid(uid),
    ...pool.filter((o) => controllerRefOf(o) === undefined),
  ]) {
    if (namespace !== undefined && namespace !== '' && object.metadata.namespace !== namespace)
      continue
    const id =
      object.metadata.uid ?? `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`
    if (seen.has(id)) continue
    seen.add(id)
    out.push(object)
  }
  return out
}

/**
 * Claims, adopts and releases candidates of one child resource; returns the claimed children.
 *
 * @remarks
 * Adoption first checks once per pass, with a live uncached GET, that the parent still exists
 * with the same UID and is not being deleted (upstream `CanAdopt`). NotFound during adopt or
 * release is ignored; other errors are collected and thrown together after the pass.
 */
export async function claimChildren(
  context: ClaimContext,
  childRef: ResourceRef,
  candidates: readonly KubeObject[]
): Promise<KubeObject[]> {
  const { parent } = context
  const uid = parent.metadata.uid ?? ''
  const claimed: KubeObject[] = []
  const errors: unknown[] = []
  let canAdopt: boolean | undefined
  for (const child of candidates) {
    const ref = controllerRefOf(child)
    const labels = child.metadata.labels ?? {}
    if (ref !== undefined && ref.uid !== uid) continue
    if (ref !== undefined) {
      if (context.matches(labels)) {
        claimed.push(child)
      } else if (!isDeleting(parent)) {
        await release(context, childRef, child).catch((error: unknown) => errors.push(error))
      }
      continue
    }
    if (!context.matches(labels) || isDeleting(parent) || isDeleting(child)) continue
    canAdopt ??= await checkCanAdopt(context)
    if (!canAdopt) continue
    try {
      const adopted = await adopt(context, childRef, child)
      if (adopted !== undefined) claimed.push(adopted)
    } catch (error) {
      errors.push(error)
    }
  }
  if (errors.length > 0) {
    throw new AggregateError(
      errors,
      `cannot claim children of ${parent.kind} ${parent.metadata.name ?? ''}: ${errors.map(String).join('; ')}`
    )
  }
  return claimed
}

async function checkCanAdopt(context: ClaimContext): Promise<boolean> {
  const { parent } = context
  try {
    const fresh = await context.client.get(context.parentRef, parent.metadata.name ?? '', {
      ...(parent.metadata.namespace === undefined ? {} : { namespace: parent.metadata.namespace }),
      ...(context.signal === undefined ? {} : { signal: context.signal }),
    })
    return fresh.metadata.uid === parent.metadata.uid && !isDeleting(fresh)
  } catch (error) {
    if (error instanceof NotFoundError) return false
    throw error
  }
}

function adopt(
  context: ClaimContext,
  childRef: ResourceRef,
  child: KubeObject
): Promise<KubeObject | undefined> {
  const { parent } = context
  const owner: OwnerReference = {
    apiVersion: context.parentApiVersion,
    kind: context.parentKind,
    name: parent.metadata.name ?? '',
    uid: parent.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  }
  return updateLive(
    context.client,
    childRef,
    child.metadata.name ?? '',
    (current) => {
      if (controllerRefOf(current) !== undefined) return undefined
      const others = (current.metadata.ownerReferences ?? []).filter((r) => r.uid !== owner.uid)
      current.metadata.ownerReferences = [...others, owner]
      return current
    },
    {
      ...(child.metadata.namespace === undefined ? {} : { namespace: child.metadata.namespace }),
      ...(child.metadata.uid === undefined ? {} : { uid: child.metadata.uid }),
      ...(context.signal === undefined ? {} : { signal: context.signal }),
    }
  ).then((result) =>
    result !== undefined && controllerRefOf(result)?.uid === owner.uid ? result : undefined
  )
}

async function release(
  context: ClaimContext,
  childRef: ResourceRef,
  child: KubeObject
): Promise<void> {
  const uid = context.parent.metadata.uid ?? ''
  await updateLive(
    context.client,
    childRef,
    child.metadata.name ?? '',
    (current) => {
      const refs = current.metadata.ownerReferences ?? []
      if (!refs.some((r) => r.uid === uid)) return undefined
      // Upstream removes every reference with the parent's UID, not only the controller one.
      current.metadata.ownerReferences = refs.filter((r) => r.uid !== uid)
      return current
    },
    {
      ...(child.metadata.namespace === undefined ? {} : { namespace: child.metadata.namespace }),
      ...(child.metadata.uid === undefined ? {} : { uid: child.metadata.uid }),
      ...(context.signal === undefined ? {} : { signal: context.signal }),
    }
  )
}
