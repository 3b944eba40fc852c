/**
 * The test kit: a real local Kubernetes control plane, like controller-runtime's envtest.
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
} from './control-plane.js'
export type { ControlPlane, ControlPlaneOptions } from './control-plane.js'
export {
  findControlPlaneBinaries,
  defaultBinaryDir,
  defaultKwokPath,
  MissingBinariesError,
  KUBERNETES_VERSION,
  ETCD_VERSION,
} from './control-plane-binaries.js'
export type { ControlPlaneBinaries } from './control-plane-binaries.js'
export { installCrds, parseManifests, readManifestFile, CRD_RESOURCE } from './install-crds.js'
export type { CrdSource } from './install-crds.js'
export { metacontrollerCrdFiles } from './metacontroller-crds.js'
export { waitFor, WaitTimeoutError } from './wait-for.js'
export type { WaitForOptions } from './wait-for.js'
export { findFreePort } from './free-port.js'
export { AUDIT_POLICY, parseFeatureGates } from './api-server-options.js'
export type { FeatureGates } from './api-server-options.js'
