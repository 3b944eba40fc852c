/**
 * The configuration of a local control plane's components: the command-line flags of etcd,
 * kube-apiserver, kube-controller-manager, kube-scheduler and KWOK, computed from where the plane
 * lives and which ports it got. Pure: nothing here starts a process or touches a file.
 *
 * @module
 */
import { join } from 'node:path'
import { auditLogFlags, featureGateFlags } from './api-server-options.js'
import type { ControlPlaneOptions, PodNetworkOptions } from './control-plane-options.js'
import { NODE_LEASE_SECONDS, SIMULATED_NODE_ANNOTATION } from './simulated-nodes.js'

/** The loopback ports a local control plane's components listen on. */
export interface ControlPlanePorts {
  readonly etcd: number
  readonly etcdPeer: number
  readonly apiServer: number
  readonly controllerManager: number
  readonly scheduler: number
  readonly kwok: number
}

/** Where a local control plane lives and how it was asked to run: the flags' only inputs. */
export interface ControlPlaneLayout {
  /** Working directory (sub-folders `etcd`, `pki`, `kcm`, `scheduler`, `kwok`, `logs`). */
  readonly dir: string
  readonly kubeconfigPath: string
  readonly ports: ControlPlanePorts
  /** The CA the kubeconfig trusts and the controller manager publishes to Pods. */
  readonly caPath: string
  readonly options: ControlPlaneOptions
  /** Whether kube-controller-manager runs its default controllers (nodes or a real node). */
  readonly defaultControllers: boolean
}

/** etcd's flags: one member on loopback, no fsync (the data is throwaway). */
export function etcdFlags(layout: ControlPlaneLayout): string[] {
  const client = `http://127.0.0.1:${layout.ports.etcd}`
  const peer = `http://127.0.0.1:${layout.ports.etcdPeer}`
  return [
    '--name=metactl',
    `--data-dir=${join(layout.dir, 'etcd')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=metactl=${peer}`,
    '--unsafe-no-fsync',
    '--log-level=warn',
  ]
}

/** kube-apiserver's flags; the caller's `apiServerFlags` come last so they override ours. */
export function apiServerFlags(layout: ControlPlaneLayout): string[] {
  const pki = join(layout.dir, 'pki')
  const options = layout.options
  return [
    `--etcd-servers=http://127.0.0.1:${layout.ports.etcd}`,
    `--secure-port=${layout.ports.apiServer}`,
    ...apiServerNetworkFlags(options.podNetwork),
    `--cert-dir=${pki}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    '--authorization-mode=RBAC',
    `--token-auth-file=${join(pki, 'tokens.csv')}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${join(pki, 'sa.pub')}`,
    `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
    '--allow-privileged=true',
    '--profiling=false',
    ...featureGateFlags(options.featureGates),
    ...auditLogFlags(options.auditLogPath, pki),
    ...(options.apiServerFlags ?? []),
  ]
}

function apiServerNetworkFlags(network: PodNetworkOptions | undefined): string[] {
  if (network !== undefined) {
    return [
      '--bind-address=0.0.0.0',
      `--advertise-address=${network.advertiseAddress}`,
      `--tls-cert-file=${network.tlsCertFile}`,
      `--tls-private-key-file=${network.tlsKeyFile}`,
      // The node's name resolves nowhere in the namespace (no DNS); its address does.
      '--kubelet-preferred-address-types=InternalIP',
    ]
  }
  return [
    '--bind-address=127.0.0.1',
    // Required on machines without a default route, where the apiserver cannot pick an address.
    '--advertise-address=127.0.0.1',
    // A loopback address cannot be stored in the `kubernetes` Endpoints object.
    '--endpoint-reconciler-type=none',
    // Without nodes no service-account controller runs, and with them a Pod created right after
    // its namespace would be refused until the `default` ServiceAccount exists. Pods of a real
    // node get their tokens (podNetwork), and its start waits for that ServiceAccount.
    '--disable-admission-plugins=ServiceAccount',
  ]
}

/** kube-controller-manager's flags: the default controllers, or only GC and namespaces. */
export function controllerManagerFlags(layout: ControlPlaneLayout): string[] {
  const pki = join(layout.dir, 'pki')
  const controllers = layout.defaultControllers
    ? // The default set; the token controller signs service-account tokens with our key.
      [
        '--controllers=*',
        `--service-account-private-key-file=${join(pki, 'sa.key')}`,
        `--root-ca-file=${layout.caPath}`,
        // The default StorageClass's provisioner (host-path-storage.ts).
        '--enable-hostpath-provisioner',
      ]
    : ['--controllers=garbage-collector-controller,namespace-controller']
  return [
    ...kubeconfigFlags(layout.kubeconfigPath),
    ...controllers,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${layout.ports.controllerManager}`,
    `--cert-dir=${join(layout.dir, 'kcm')}`,
    '--kube-api-qps=100',
    '--kube-api-burst=200',
  ]
}

/** kube-scheduler's flags. */
export function schedulerFlags(layout: ControlPlaneLayout): string[] {
  return [
    ...kubeconfigFlags(layout.kubeconfigPath),
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${layout.ports.scheduler}`,
    `--cert-dir=${join(layout.dir, 'scheduler')}`,
  ]
}

/** KWOK's flags: it manages only the nodes we annotated as simulated. */
export function kwokFlags(layout: ControlPlaneLayout, configPath: string): string[] {
  return [
    `--kubeconfig=${layout.kubeconfigPath}`,
    `--config=${configPath}`,
    `--manage-nodes-with-annotation-selector=${SIMULATED_NODE_ANNOTATION}=fake`,
    `--node-lease-duration-seconds=${NODE_LEASE_SECONDS}`,
    `--server-address=127.0.0.1:${layout.ports.kwok}`,
  ]
}

function kubeconfigFlags(kubeconfigPath: string): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    `--authentication-kubeconfig=${kubeconfigPath}`,
    `--authorization-kubeconfig=${kubeconfigPath}`,
  ]
}
