/**
 * Starting a component again on fresh ports when another process took its port between the
 * probe (`findFreePort`) and the component's own bind: on a machine where other clusters
 * and tests start at the same time, that window is seconds wide for the components started
 * after the API server.
 *
 * @module
 */
import { ControlPlaneStartError } from './control-plane-start-error.js'

/** How many times a component is started before a port conflict is reported as its failure. */
export const PORT_CONFLICT_ATTEMPTS = 3

/** Tells whether a start failure is a component finding its port already bound. */
export function isPortConflict(error: unknown): boolean {
  return error instanceof ControlPlaneStartError && error.message.includes('address already in use')
}

/**
 * Runs `start`; when it fails with a port conflict, runs `repick` (stop what was started, choose
 * new ports) and tries again, at most {@link PORT_CONFLICT_ATTEMPTS} times in all. Any other
 * failure, and the last conflict, is thrown unchanged.
 */
export async function retryOnPortConflict(
  start: () => Promise<void>,
  repick: () => Promise<void>,
  onRetry: (message: string) => void
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await start()
      return
    } catch (error) {
      if (!isPortConflict(error) || attempt >= PORT_CONFLICT_ATTEMPTS) throw error
      const component = (error as ControlPlaneStartError).component
      onRetry(`${component}: its port was taken; retrying with a new port`)
      await repick()
    }
  }
}
