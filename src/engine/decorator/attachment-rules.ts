/**
 * What makes an object a DecoratorController's attachment, and the rules its desired
 * attachments follow: one definition for the engine and `metactl render`.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { controllerRefOf } from '../../core/owner-references.js'
import { DECORATOR_CONTROLLER_ANNOTATION } from '../../api/decorator-controller-spec.js'
import type { ChildType } from '../children/plan-children.js'
import type { SyncRules } from '../sync/plan-sync.js'

/**
 * Tells whether an object is an attachment of this target for this DecoratorController: the
 * target controls it, it carries the controller's marker annotation, and it is in the target's
 * namespace (anywhere, for a cluster-scoped target). A decorator never adopts or releases.
 */
export function isAttachmentOf(object: KubeObject, target: KubeObject, name: string): boolean {
  const namespace = target.metadata.namespace ?? ''
  return (
    controllerRefOf(object)?.uid === target.metadata.uid &&
    object.metadata.annotations?.[DECORATOR_CONTROLLER_ANNOTATION] === name &&
    (namespace === '' || object.metadata.namespace === namespace)
  )
}

/** An attachment rule resolved to its GVK key, resource and scope. */
export interface AttachmentType extends ChildType {
  /** The GVK key, e.g. `NetworkPolicy.networking.k8s.io/v1`. */
  readonly type: string
}

/**
 * The rules desired attachments follow: declared types only, the target's namespace, and the
 * marker annotation added to each; there is no selector to match.
 */
export function attachmentRules(name: string, attachments: readonly AttachmentType[]): SyncRules {
  const types = new Map<string, ChildType>()
  const namespaced = new Map<string, boolean>()
  for (const attachment of attachments) {
    if (types.has(attachment.type)) continue
    types.set(attachment.type, { ref: attachment.ref, updateMethod: attachment.updateMethod })
    namespaced.set(attachment.type, attachment.ref.namespaced)
  }
  return {
    types,
    ruleField: 'attachments',
    declaredTypes: new Set(types.keys()),
    namespaced,
    injectLabels: {},
    injectAnnotations: { [DECORATOR_CONTROLLER_ANNOTATION]: name },
    matchesSelector: () => true,
  }
}
