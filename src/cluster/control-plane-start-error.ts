/**
 * The one error a local control plane's start raises for a component that does not become
 * ready, and how it is made from the component's process: its name, exit status and log tail.
 *
 * @module
 */
import { logTail } from './managed-process.js'
import type { ManagedProcess } from './managed-process.js'

/** Raised when a component does not become ready; the message carries its log tail. */
export class ControlPlaneStartError extends Error {
  override readonly name = 'ControlPlaneStartError'
  /** The component that failed: `etcd`, `kube-apiserver` or `kube-controller-manager`. */
  readonly component: string
  constructor(component: string, message: string, options?: ErrorOptions) {
    super(message, options)
    this.component = component
  }
}

/** Builds the {@link ControlPlaneStartError} of `proc`, saying `what` went wrong with its log tail. */
export function componentFailure(
  proc: ManagedProcess,
  what: string,
  cause?: unknown
): ControlPlaneStartError {
  const status = proc.exitStatus === undefined ? '' : ` (process ended: ${proc.exitStatus})`
  return new ControlPlaneStartError(
    proc.spec.name,
    `${proc.spec.name} ${what}${status}. Last lines of ${proc.spec.logFile}:\n${logTail(proc.spec.logFile)}`,
    { cause }
  )
}
