/**
 * The test kit: a real local Kubernetes control plane, like controller-runtime's envtest, and
 * `waitFor`. The control plane itself lives in `src/cluster/`, which `metactl cluster` also runs.
 *
 * @example
 * ```ts
 * import { startControlPlane } from 'metacontroller-ts/testing'
 *
 * const plane = await startControlPlane({ crds: ['deploy/crds/compositecontrollers.yaml'] })
 * // plane.kubeconfigPath works with kubectl; plane.client is a DynamicClient.
 * await plane.stop()
 * ```
 *
 * @module
 */
export {
  startControlPlane,
  ControlPlaneStartError,
  UNPRIVILEGED_USER,
  UNPRIVILEGED_CONTEXT,
} from '../cluster/control-plane.js'
export type { ControlPlane, ControlPlaneOptions } from '../cluster/control-plane.js'
export {
  findControlPlaneBinaries,
  defaultBinaryDir,
  defaultKwokPath,
  MissingBinariesError,
  missingBinaries,
  INSTALL_COMMAND,
  KUBERNETES_VERSION,
  ETCD_VERSION,
} from '../cluster/control-plane-binaries.js'
export type { ControlPlaneBinaries } from '../cluster/control-plane-binaries.js'
export {
  installCrds,
  parseManifests,
  readManifestFile,
  CRD_RESOURCE,
} from '../cluster/install-crds.js'
export type { CrdSource } from '../cluster/install-crds.js'
export { metacontrollerCrdFiles } from '../cluster/metacontroller-crds.js'
export { waitFor, WaitTimeoutError } from '../runtime/clock/wait-for.js'
export type { WaitForOptions } from '../runtime/clock/wait-for.js'
export { findFreePort } from '../cluster/free-port.js'
export { lastSyncError, waitForParent } from './wait-for-parent.js'
export type { ParentRef } from './wait-for-parent.js'
export { AUDIT_POLICY, parseFeatureGates } from '../cluster/api-server-options.js'
export type { FeatureGates } from '../cluster/api-server-options.js'
