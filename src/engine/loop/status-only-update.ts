/**
 * The `ignoreStatusChanges` filter of parent (and target) events, the same for both kinds.
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { KubeObject } from '../../core/kube-object.js'
import { isDeleting } from '../../core/owner-references.js'

/**
 * Tells whether a parent update can be dropped under `ignoreStatusChanges`: a real update (not a
 * resync's replay) that changed none of generation, labels and annotations, on a parent that is
 * not being deleted.
 */
export function isStatusOnlyUpdate(old: KubeObject, object: KubeObject): boolean {
  return (
    old !== object &&
    old.metadata.generation === object.metadata.generation &&
    isDeepStrictEqual(old.metadata.labels ?? {}, object.metadata.labels ?? {}) &&
    isDeepStrictEqual(old.metadata.annotations ?? {}, object.metadata.annotations ?? {}) &&
    !isDeleting(object)
  )
}
