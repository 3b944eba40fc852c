/**
 * What `metactl render` and the SDK's test helpers need to know about resources without API
 * discovery: the plural resource name of a kind, a kind for a resource, and whether a kind is
 * cluster-scoped.
 *
 * @remarks
 * A guess, documented so that it can be worked around: the resource of a kind is its lowercase
 * plural (`Pod` → `pods`, `NetworkPolicy` → `networkpolicies`, `Ingress` → `ingresses`), with an
 * override map for irregular kinds (`Endpoints` → `endpoints`). Kinds are namespaced unless they
 * are one of the well-known cluster-scoped kinds listed here (`Namespace`, `Node`, `ClusterRole`,
 * `CustomResourceDefinition`, ...). A cluster-scoped custom resource is therefore taken as
 * namespaced, which shows only under a namespaced parent: its children get the parent's namespace.
 *
 * @module
 */
import { groupOf } from '../core/owner-references.js'

/** Lowercase kinds whose resource is not the regular plural. */
const IRREGULAR_PLURALS: Readonly<Record<string, string>> = {
  endpoints: 'endpoints',
}

/** Well-known kinds by API group: their casing, and which are cluster-scoped. */
const WELL_KNOWN_KINDS: Readonly<Record<string, { namespaced: string[]; cluster: string[] }>> = {
  '': {
    namespaced: [
      'Pod',
      'Service',
      'ConfigMap',
      'Secret',
      'ServiceAccount',
      'PersistentVolumeClaim',
      'Endpoints',
      'Event',
      'LimitRange',
      'ResourceQuota',
      'ReplicationController',
      'PodTemplate',
    ],
    cluster: ['Namespace', 'Node', 'PersistentVolume', 'ComponentStatus'],
  },
  apps: {
    namespaced: ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ControllerRevision'],
    cluster: [],
  },
  batch: { namespaced: ['Job', 'CronJob'], cluster: [] },
  autoscaling: { namespaced: ['HorizontalPodAutoscaler'], cluster: [] },
  policy: { namespaced: ['PodDisruptionBudget'], cluster: [] },
  'networking.k8s.io': {
    namespaced: ['Ingress', 'NetworkPolicy'],
    cluster: ['IngressClass', 'IPAddress', 'ServiceCIDR'],
  },
  'discovery.k8s.io': { namespaced: ['EndpointSlice'], cluster: [] },
  'coordination.k8s.io': { namespaced: ['Lease'], cluster: [] },
  'events.k8s.io': { namespaced: ['Event'], cluster: [] },
  'rbac.authorization.k8s.io': {
    namespaced: ['Role', 'RoleBinding'],
    cluster: ['ClusterRole', 'ClusterRoleBinding'],
  },
  'storage.k8s.io': {
    namespaced: ['CSIStorageCapacity'],
    cluster: ['StorageClass', 'VolumeAttachment', 'CSIDriver', 'CSINode'],
  },
  'apiextensions.k8s.io': { namespaced: [], cluster: ['CustomResourceDefinition'] },
  'apiregistration.k8s.io': { namespaced: [], cluster: ['APIService'] },
  'admissionregistration.k8s.io': {
    namespaced: [],
    cluster: [
      'MutatingWebhookConfiguration',
      'ValidatingWebhookConfiguration',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ],
  },
  'certificates.k8s.io': { namespaced: [], cluster: ['CertificateSigningRequest'] },
  'scheduling.k8s.io': { namespaced: [], cluster: ['PriorityClass'] },
  'node.k8s.io': { namespaced: [], cluster: ['RuntimeClass'] },
  'flowcontrol.apiserver.k8s.io': {
    namespaced: [],
    cluster: ['FlowSchema', 'PriorityLevelConfiguration'],
  },
  'metacontroller.k8s.io': {
    namespaced: ['ControllerRevision'],
    cluster: ['CompositeController', 'DecoratorController'],
  },
}

/**
 * Returns the resource name of a kind: its lowercase plural.
 *
 * @remarks
 * Irregular kinds come from an override map; otherwise `-s`, `-x`, `-z`, `-ch` and `-sh` take
 * `-es`, a consonant followed by `-y` becomes `-ies`, and everything else takes `-s`.
 */
export function pluralOf(kind: string): string {
  const lower = kind.toLowerCase()
  const irregular = IRREGULAR_PLURALS[lower]
  if (irregular !== undefined) return irregular
  if (/(?:s|x|z|ch|sh)$/.test(lower)) return `${lower}es`
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`
  return `${lower}s`
}

/** Tells whether objects of `kind` are served as `resource` (see {@link pluralOf}). */
export function isResourceOf(kind: string, resource: string): boolean {
  return pluralOf(kind) === resource
}

/**
 * Returns the kind of a resource: a well-known kind of the apiVersion's group when one has that
 * plural, else a guess (`widgets` → `Widget`) with `guessed` set.
 */
export function kindOf(apiVersion: string, resource: string): { kind: string; guessed: boolean } {
  const known = WELL_KNOWN_KINDS[groupOf(apiVersion)]
  const kind = [...(known?.namespaced ?? []), ...(known?.cluster ?? [])].find((k) =>
    isResourceOf(k, resource)
  )
  if (kind !== undefined) return { kind, guessed: false }
  let singular = resource
  if (resource.endsWith('ies')) singular = `${resource.slice(0, -3)}y`
  else if (/(?:ss|x|z|ch|sh)es$/.test(resource)) singular = resource.slice(0, -2)
  else if (resource.endsWith('s')) singular = resource.slice(0, -1)
  return { kind: singular.charAt(0).toUpperCase() + singular.slice(1), guessed: true }
}

/** Tells whether a kind is a well-known cluster-scoped kind; every other kind is namespaced. */
export function isClusterScoped(apiVersion: string, kind: string): boolean {
  return WELL_KNOWN_KINDS[groupOf(apiVersion)]?.cluster.includes(kind) === true
}
