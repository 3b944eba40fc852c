/**
 * The in-memory cluster of an offline sync: seeded with the parent and the observed objects,
 * read through informer-like caches, with no events recorded.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import type { ResourceRef } from '../kube/dynamic-client.js'
import { ObjectStore } from '../runtime/informers/object-store.js'
import type { ObjectReader } from '../runtime/informers/object-store.js'
import type { EventSink } from '../engine/events/event-recorder.js'
import { FakeCluster } from '../in-memory/fake-cluster.js'
import { messageOf } from '../core/message-of.js'
import { OfflineError } from './offline-error.js'

/** Events a render's sync asks for go nowhere: there is no cluster to record them in. */
export const NO_EVENTS: EventSink = { record: () => undefined }

/** Builds a cache of one resource from the cluster's objects, as an informer would hold it. */
export function cacheOf(cluster: FakeCluster, ref: ResourceRef): ObjectReader {
  const store = new ObjectStore()
  for (const object of cluster.objects(ref)) store.upsert(object)
  return store
}

/** Seeds a cluster with the parent and every other object given, by resource. */
export function seedCluster(
  parentRef: ResourceRef,
  parent: KubeObject,
  objects: Iterable<readonly [ResourceRef, readonly KubeObject[]]>
): FakeCluster {
  const cluster = new FakeCluster()
  try {
    cluster.seed(parentRef, parent)
    for (const [ref, list] of objects) for (const object of list) cluster.seed(ref, object)
  } catch (error) {
    throw new OfflineError(`cannot render: ${messageOf(error)}`)
  }
  return cluster
}

/**
 * The parent as the engine sees it once it is being deleted while the controller's finalizer
 * holds it: what makes the pipeline call the finalize hook (`--finalizing`).
 */
export function asDeleting(parent: KubeObject, finalizer: string): KubeObject {
  const deleting = structuredClone(parent)
  const metadata = deleting.metadata
  metadata.deletionTimestamp ??= new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const finalizers = metadata.finalizers ?? []
  if (!finalizers.includes(finalizer)) metadata.finalizers = [...finalizers, finalizer]
  return deleting
}
