import type { KubeObject } from '../../core/kube-object.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import type { ObjectClient } from '../../kube/object-client.js'

/**
 * Deletes a child as upstream does (spec §3.8): only that very object, and its dependents too.
 *
 * @remarks
 * Shared by plain deletes and by both appliers' recreates, so that every delete of a child carries
 * the same precondition and propagation policy.
 */
export async function deleteChild(
  client: Pick<ObjectClient, 'delete'>,
  ref: ResourceRef,
  child: KubeObject,
  call: { readonly signal?: AbortSignal }
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
