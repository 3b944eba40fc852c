/**
 * Claims children for a parent the way Kubernetes' ControllerRefManager does: adopt matching
 * orphans, keep owned children that match, release owned children that no longer match.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { EqualityTerm } from '../../core/label-selector.js'
import { controllerRefOf, isDeleting } from '../../core/owner-references.js'
import type { OwnerReference } from '../../core/kube-object.js'
import { NotFoundError } from '../../kube/api-error.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import type { ObjectClient } from '../../kube/object-client.js'
import type { ObjectReader } from '../../runtime/informers/object-store.js'
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

/**
 * Lists the candidates of one child rule: owned by the parent, or orphans in its namespace (in
 * any namespace for a cluster-scoped parent) that meet the equality terms of the parent's
 * selector (`equalityTerms` of it; none keeps every orphan).
 *
 * @remarks
 * Both come from the store's indexes, so the cost follows the parent's own children and the
 * orphans it could adopt, not every object of the type in the namespace: children of other
 * parents can never be claimed, and orphans without the selector's labels never adopted, so
 * neither is visited once the store indexes the terms' label keys.
 */
export function claimCandidates(
  store: ObjectReader,
  parent: KubeObject,
  terms: readonly EqualityTerm[] = []
): KubeObject[] {
  const uid = parent.metadata.uid ?? ''
  const namespace = parent.metadata.namespace
  const scoped = namespace !== undefined && namespace !== ''
  const orphans = store.listMatching({
    ...(scoped ? { namespace } : {}),
    orphansOnly: true,
    labels: terms,
  })
  const seen = new Set<string>()
  const out: KubeObject[] = []
  for (const object of [...store.listByControllerUid(uid), ...orphans]) {
    if (scoped && object.metadata.namespace !== namespace) continue
    const id =
      object.metadata.uid ?? `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`
    if (seen.has(id)) continue
    seen.add(id)
    out.push(object)
  }
  return out
}

/** What the claim rules decide for one candidate, with the reason when it is not claimed. */
export type ClaimDecision =
  | { readonly action: 'claim' }
  | { readonly action: 'adopt' }
  | { readonly action: 'release'; readonly reason: string }
  | { readonly action: 'ignore'; readonly reason: string }

/**
 * Decides, without writing, what the claim rules (Kubernetes' ControllerRefManager, spec §3.6)
 * do with one candidate: claim an owned child that matches, adopt a matching orphan, release an
 * owned child that no longer matches, ignore the rest. The engine's {@link claimChildren} and
 * `metactl render` both follow it.
 */
export function decideClaim(
  child: KubeObject,
  parent: KubeObject,
  matches: (labels: Readonly<Record<string, string>>) => boolean
): ClaimDecision {
  const parentNamespace = parent.metadata.namespace ?? ''
  const namespace = child.metadata.namespace ?? ''
  if (parentNamespace !== '' && namespace !== parentNamespace) {
    return {
      action: 'ignore',
      reason: `it is in namespace ${namespace || '(none)'}, not the parent's ${parentNamespace}`,
    }
  }
  const ref = controllerRefOf(child)
  if (ref !== undefined && ref.uid !== parent.metadata.uid) {
    return {
      action: 'ignore',
      reason: `it is controlled by ${ref.kind} ${ref.name} (uid ${ref.uid}), not by the parent`,
    }
  }
  const labelsMatch = matches(child.metadata.labels ?? {})
  if (ref !== undefined) {
    if (labelsMatch) return { action: 'claim' }
    const reason = "its labels do not match the parent's selector, so the engine would release it"
    // A deleting parent keeps what it owns: releasing would only race the garbage collector.
    return isDeleting(parent) ? { action: 'ignore', reason } : { action: 'release', reason }
  }
  if (!labelsMatch) {
    return {
      action: 'ignore',
      reason: "its labels do not match the parent's selector, so the engine would not adopt it",
    }
  }
  if (isDeleting(parent) || isDeleting(child)) {
    return {
      action: 'ignore',
      reason: 'the engine does not adopt an orphan while it or the parent is being deleted',
    }
  }
  return { action: 'adopt' }
}

/**
 * Claims, adopts and releases candidates of one child resource as {@link decideClaim} decides;
 * returns the claimed children.
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
  const claimed: KubeObject[] = []
  const errors: unknown[] = []
  let canAdopt: boolean | undefined
  for (const child of candidates) {
    const decision = decideClaim(child, parent, context.matches)
    switch (decision.action) {
      case 'claim':
        claimed.push(child)
        break
      case 'release':
        await release(context, childRef, child).catch((error: unknown) => errors.push(error))
        break
      case 'adopt':
        canAdopt ??= await checkCanAdopt(context)
        if (!canAdopt) break
        try {
          const adopted = await adopt(context, childRef, child)
          if (adopted !== undefined) claimed.push(adopted)
        } catch (error) {
          errors.push(error)
        }
        break
      case 'ignore':
        break
      default: {
        const unreachable: never = decision
        throw new Error(`unknown claim decision ${String(unreachable)}`)
      }
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
