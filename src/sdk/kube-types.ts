/**
 * Kubernetes object types for hooks, from the `kubernetes-types` package (Kubernetes 1.30 API;
 * declarations only, so they cost nothing at run time).
 *
 * @remarks
 * Each built-in object type has literal `apiVersion` and `kind` (`Pod` has `apiVersion?: 'v1'`,
 * `kind?: 'Pod'`), which is what lets {@link ChildrenMap} key observed children by type. The
 * API groups are exported whole as namespaces (`CoreV1.PodSpec`, `AppsV1.DeploymentSpec`), and
 * every object kind of the core, apps, batch, networking, rbac and policy groups also by name
 * (`Namespace`, `ResourceQuota`, `ClusterRoleBinding`, ...).
 *
 * @example
 * ```ts
 * import type { ConfigMap, AppsV1 } from 'metacontroller-ts'
 * const cm: ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: {} }
 * const spec: AppsV1.DeploymentSpec = { selector: {}, template: {} }
 * ```
 *
 * @module
 */
import type * as AppsV1 from 'kubernetes-types/apps/v1.js'
import type * as BatchV1 from 'kubernetes-types/batch/v1.js'
import type * as CoreV1 from 'kubernetes-types/core/v1.js'
import type * as MetaV1 from 'kubernetes-types/meta/v1.js'
import type * as NetworkingV1 from 'kubernetes-types/networking/v1.js'
import type * as PolicyV1 from 'kubernetes-types/policy/v1.js'
import type * as RbacV1 from 'kubernetes-types/rbac/v1.js'

export type { AppsV1, BatchV1, CoreV1, MetaV1, NetworkingV1, PolicyV1, RbacV1 }

/** A v1 ConfigMap. */
export type ConfigMap = CoreV1.ConfigMap
/** A v1 Secret. */
export type Secret = CoreV1.Secret
/** A v1 Pod. */
export type Pod = CoreV1.Pod
/** A v1 Service. */
export type Service = CoreV1.Service
/** A v1 ServiceAccount. */
export type ServiceAccount = CoreV1.ServiceAccount
/** A v1 PersistentVolumeClaim. */
export type PersistentVolumeClaim = CoreV1.PersistentVolumeClaim
/** An apps/v1 Deployment. */
export type Deployment = AppsV1.Deployment
/** An apps/v1 StatefulSet. */
export type StatefulSet = AppsV1.StatefulSet
/** An apps/v1 DaemonSet. */
export type DaemonSet = AppsV1.DaemonSet
/** A batch/v1 Job. */
export type Job = BatchV1.Job
/** A batch/v1 CronJob. */
export type CronJob = BatchV1.CronJob
/** A networking.k8s.io/v1 Ingress. */
export type Ingress = NetworkingV1.Ingress
/** A networking.k8s.io/v1 NetworkPolicy. */
export type NetworkPolicy = NetworkingV1.NetworkPolicy
/** A policy/v1 PodDisruptionBudget. */
export type PodDisruptionBudget = PolicyV1.PodDisruptionBudget
/** An rbac.authorization.k8s.io/v1 Role. */
export type Role = RbacV1.Role
/** An rbac.authorization.k8s.io/v1 RoleBinding. */
export type RoleBinding = RbacV1.RoleBinding
/** A v1 Namespace (cluster-scoped). */
export type Namespace = CoreV1.Namespace
/** A v1 ResourceQuota. */
export type ResourceQuota = CoreV1.ResourceQuota
/** A v1 LimitRange. */
export type LimitRange = CoreV1.LimitRange
/** A v1 Endpoints. */
export type Endpoints = CoreV1.Endpoints
/** A v1 PersistentVolume (cluster-scoped). */
export type PersistentVolume = CoreV1.PersistentVolume
/** A v1 ReplicationController. */
export type ReplicationController = CoreV1.ReplicationController
/** A v1 PodTemplate. */
export type PodTemplate = CoreV1.PodTemplate
/** An apps/v1 ReplicaSet. */
export type ReplicaSet = AppsV1.ReplicaSet
/** An apps/v1 ControllerRevision. */
export type ControllerRevision = AppsV1.ControllerRevision
/** A networking.k8s.io/v1 IngressClass (cluster-scoped). */
export type IngressClass = NetworkingV1.IngressClass
/** An rbac.authorization.k8s.io/v1 ClusterRole (cluster-scoped). */
export type ClusterRole = RbacV1.ClusterRole
/** An rbac.authorization.k8s.io/v1 ClusterRoleBinding (cluster-scoped). */
export type ClusterRoleBinding = RbacV1.ClusterRoleBinding
/** A meta/v1 Condition, the shape of `status.conditions[]` entries. */
export type Condition = MetaV1.Condition
