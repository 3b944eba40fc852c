/**
 * What a caller asks of a local control plane ({@link ControlPlaneOptions}) and what it gets back
 * ({@link ControlPlane}), apart from the code that starts one, so the pieces that build it can
 * share them without importing the entry point.
 *
 * @module
 */
import type { ClusterConfig } from '../kube/cluster-config.js'
import type { DynamicClient } from '../kube/dynamic-client.js'
import type { FeatureGates } from './api-server-options.js'
import type { ControlPlaneBinaries } from './control-plane-binaries.js'
import type { CrdSource } from './install-crds.js'

/** Options of {@link startControlPlane}. */
export interface ControlPlaneOptions {
  /** Working directory for data, certificates, logs and the kubeconfig; a temp dir when absent. */
  readonly dir?: string
  /** CRDs to install (YAML file paths or objects) before the controller manager starts. */
  readonly crds?: readonly CrdSource[]
  /**
   * Uses the cluster in `$KUBECONFIG` (context `$METACTL_CONTEXT`, else the current one) instead
   * of starting one. Defaults to
   * `METACTL_USE_EXISTING_CLUSTER=1` in the environment.
   */
  readonly useExistingCluster?: boolean
  /** Binaries to run; found with {@link findControlPlaneBinaries} when absent. */
  readonly binaries?: ControlPlaneBinaries
  /** Time each component gets to become ready (60 s). */
  readonly startTimeoutMs?: number
  /** Leaves the processes running after this Node process exits (for `metactl cluster up`). */
  readonly background?: boolean
  /** Fixed kube-apiserver port; a free one when absent. Refused with a clear error if taken. */
  readonly apiServerPort?: number
  /** Extra kube-apiserver flags, appended last so they override ours. */
  readonly apiServerFlags?: readonly string[]
  /** kube-apiserver feature gates, e.g. `{ ShardedListAndWatch: true }`. */
  readonly featureGates?: FeatureGates
  /** Writes kube-apiserver's audit log of writes here (JSON lines; see `AUDIT_POLICY`). */
  readonly auditLogPath?: string
  /** Receives one line per startup step. */
  readonly onProgress?: (message: string) => void
  /**
   * Simulated nodes to register (default 1, at most 256). With one or more, kube-scheduler and
   * KWOK run and kube-controller-manager runs its default controllers (Deployments, Jobs,
   * StatefulSets, EndpointSlices, service accounts, …), so Pods are scheduled and become Running
   * and Ready. `0` gives the smaller plane: no scheduler, Pods stay `Pending`, and only the
   * garbage collector and namespace controllers run.
   */
  readonly nodes?: number
  /**
   * Makes the API server reachable from real nodes and their Pods (a real node's cluster, which
   * runs this plane inside its own network namespace). Absent: everything stays on 127.0.0.1.
   */
  readonly podNetwork?: PodNetworkOptions
  /**
   * Who binds the cluster's volumes directory over the host-path provisioner's path (see
   * host-path-storage.ts): `own-mount-namespace` (default) runs kube-controller-manager in a mount
   * namespace of its own that does it; `caller` means the caller's mount namespace already has it
   * (a real node's, shared with the kubelet that mounts the volumes into Pods).
   */
  readonly volumesMount?: 'own-mount-namespace' | 'caller'
}

/**
 * How a control plane serves real nodes and Pods. With it the API server binds every address of
 * its network namespace, advertises `advertiseAddress` behind the `kubernetes` Service, serves
 * the given certificate, and admits Pods with service-account tokens; kube-scheduler and the
 * default controllers run even with `nodes: 0`, because a real node joins.
 */
export interface PodNetworkOptions {
  /** An address Pods can route to (the node's address inside the network namespace). */
  readonly advertiseAddress: string
  /** Serving certificate (PEM) valid for 127.0.0.1, `advertiseAddress` and the Service IP. */
  readonly tlsCertFile: string
  /** Its private key (PEM). */
  readonly tlsKeyFile: string
  /** The CA (PEM) that signed it: trusted by the kubeconfig and published to Pods. */
  readonly caFile: string
}

/** A running (or attached) control plane. */
export interface ControlPlane {
  /** Path of a kubeconfig with admin credentials, usable by kubectl and by our client. */
  readonly kubeconfigPath: string
  /** Working directory (empty for an existing cluster). */
  readonly dir: string
  /** The parsed connection settings. */
  readonly config: ClusterConfig
  /** A client connected as the admin user. */
  readonly client: DynamicClient
  /** True when this is an existing cluster from `$KUBECONFIG`, not one we started. */
  readonly isExisting: boolean
  /** Names of the simulated nodes this control plane registered (empty for an existing cluster). */
  readonly nodeNames: readonly string[]
  /** etcd client URL (only for a control plane we started). */
  readonly etcdUrl: string | undefined
  /** Installs more CRDs and waits until they are Established. */
  installCrds(crds: readonly CrdSource[]): Promise<void>
  /** Stops and starts kube-apiserver on the same port and data, e.g. to test watch recovery. */
  restartApiServer(): Promise<void>
  /** Stops every process this control plane started and removes a temporary working dir. */
  stop(): Promise<void>
  /** Closes this handle's connections but leaves the processes running (background mode). */
  release(): Promise<void>
}
