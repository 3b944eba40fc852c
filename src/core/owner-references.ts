import type { KubeObject, OwnerReference } from './kube-object.js'

/** Returns the object's controller owner reference (`controller: true`), if any. */
export function controllerRefOf(object: KubeObject): OwnerReference | undefined {
  return object.metadata.ownerReferences?.find((ref) => ref.controller === true)
}

/**
 * Builds the controller reference Metacontroller puts on children: the parent's apiVersion,
 * kind, name and UID, with `controller` and `blockOwnerDeletion` set.
 */
export function makeControllerRef(parent: KubeObject): OwnerReference {
  return {
    apiVersion: parent.apiVersion,
    kind: parent.kind,
    name: parent.metadata.name ?? '',
    uid: parent.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  }
}

/** Returns the group of an apiVersion: `apps` for `apps/v1`, `''` for `v1`. */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/')
  return slash === -1 ? '' : apiVersion.slice(0, slash)
}

/** Tells whether an object is being deleted. */
export function isDeleting(object: KubeObject): boolean {
  const stamp = object.metadata.deletionTimestamp
  return stamp !== undefined && stamp !== ''
}
