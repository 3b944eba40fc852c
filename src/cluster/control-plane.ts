/**
 * A real local Kubernetes control plane for tests and demos: etcd, kube-apiserver,
 * kube-controller-manager and, with nodes, kube-scheduler and KWOK simulating the nodes' kubelets.
 *
 * @remarks
 * **Guarantees**
 * - Everything listens on 127.0.0.1 only, on free ports, with RBAC on and a generated admin token.
 * - `startControlPlane` resolves only when etcd is healthy, kube-apiserver answers `/readyz`, the
 *   given CRDs are Established, the garbage collector has collected a canary object and, with
 *   nodes, kube-scheduler answers `/healthz` and every simulated node is Ready and untainted.
 * - A failure names the component and shows the tail of its log.
 * - `stop()` ends every process it started; so do SIGINT, SIGTERM and process exit.
 *
 * **Caveats** With `nodes: 0` there is no scheduler and no kubelet: Pods are stored and stay
 * `Pending`, and only the garbage collector and namespace controllers run. With nodes, Pods are
 * scheduled and their status is simulated, but no container really runs (see simulated-nodes.ts).
 *
 * @module
 */
import { mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { loadClusterConfig } from '../kube/load-cluster-config.js'
import { findControlPlaneBinaries } from './control-plane-binaries.js'
import type { ControlPlane, ControlPlaneOptions } from './control-plane-options.js'
import { ExistingControlPlane } from './existing-control-plane.js'
import { LocalControlPlane } from './local-control-plane.js'

export type {
  ControlPlane,
  ControlPlaneOptions,
  PodNetworkOptions,
} from './control-plane-options.js'
export { ControlPlaneStartError } from './control-plane-start-error.js'
export { UNPRIVILEGED_CONTEXT, UNPRIVILEGED_USER } from './control-plane-credentials.js'

/**
 * Starts a local control plane, or attaches to the cluster in `$KUBECONFIG` when
 * `useExistingCluster` (or `METACTL_USE_EXISTING_CLUSTER=1`) says so.
 *
 * @throws {@link MissingBinariesError} when the binaries are not built.
 * @throws {@link ControlPlaneStartError} when a component does not become ready.
 *
 * @example
 * ```ts
 * const plane = await startControlPlane({ crds: ['deploy/crds.yaml'] })
 * try {
 *   await plane.client.list({ group: '', version: 'v1', resource: 'namespaces', namespaced: false })
 * } finally {
 *   await plane.stop()
 * }
 * ```
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const useExisting =
    options.useExistingCluster ?? process.env['METACTL_USE_EXISTING_CLUSTER'] === '1'
  if (useExisting) {
    // $KUBECONFIG may list several files; the loader merges them as kubectl does.
    // METACTL_CONTEXT picks another context than the current one (kind, k3d, a real cluster).
    const config = await loadClusterConfig({ context: process.env['METACTL_CONTEXT'] })
    const plane = new ExistingControlPlane(process.env['KUBECONFIG'] ?? config.source, config)
    if (options.crds !== undefined && options.crds.length > 0) await plane.installCrds(options.crds)
    return plane
  }
  const binaries = options.binaries ?? findControlPlaneBinaries()
  const dir =
    options.dir === undefined ? mkdtempSync(join(tmpdir(), 'metactl-cp-')) : resolve(options.dir)
  mkdirSync(dir, { recursive: true })
  const plane = new LocalControlPlane(dir, options.dir === undefined, binaries, options)
  plane.track()
  try {
    await plane.start()
  } catch (error) {
    await plane.stop()
    throw error
  }
  return plane
}
