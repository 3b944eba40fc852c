// Creating objects on a loaded 2-core control plane: what the benchmarks of 100,000 parents and of
// wire formats create is retried through the refusals a busy server gives for a while.
import { AlreadyExistsError, ApiError } from '../src/kube/api-error.js'
import { ConnectionError } from '../src/kube/connection-error.js'

/**
 * Creates an object, retrying up to 10 times, 1 s apart, what a loaded server may refuse for a
 * while (timeouts, 429, 5xx); an AlreadyExists after a retry means an earlier try got through.
 */
export async function createRetrying(create: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await create()
      return
    } catch (error) {
      if (attempt > 1 && error instanceof AlreadyExistsError) return
      const transient =
        error instanceof ConnectionError ||
        (error instanceof ApiError && (error.statusCode === 429 || error.statusCode >= 500))
      if (!transient || attempt >= 10) throw error
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
  }
}
