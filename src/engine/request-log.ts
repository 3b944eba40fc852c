/**
 * Upstream's graded verbosity for API traffic: `V(4)` logs every write the engine makes to the
 * API server, `V(7)` every discovery request.
 *
 * @module
 */
import type { RequestObserver } from '../kube/kube-transport.js'
import type { Logger } from '../runtime/diagnostics/logger.js'

/** Verbosity of API writes, as upstream's `--zap-log-level=4`. */
export const API_WRITE_VERBOSITY = 4
/** Verbosity of discovery, as upstream's `--zap-log-level=7`. */
export const DISCOVERY_VERBOSITY = 7

/** `/api`, `/api/v1`, `/apis`, `/apis/<group>`, `/apis/<group>/<version>`: discovery documents. */
function isDiscovery(path: string): boolean {
  const bare = path.split('?', 1)[0] ?? ''
  return /^\/api(\/[^/]+)?\/?$/.test(bare) || /^\/apis(\/[^/]+){0,2}\/?$/.test(bare)
}

/**
 * Wraps `next` (the metrics observer) with the log lines of API writes and discovery requests,
 * each written only when its verbosity is on.
 */
export function loggingRequestObserver(log: Logger, next: RequestObserver): RequestObserver {
  return {
    onRequest: (info) => {
      next.onRequest(info)
      const fields = {
        verb: info.method,
        path: info.path,
        code: info.statusCode ?? '<error>',
        durationMs: info.durationMs,
      }
      if (info.method !== 'GET') log.v(API_WRITE_VERBOSITY, 'API write', fields)
      else if (isDiscovery(info.path)) log.v(DISCOVERY_VERBOSITY, 'discovery request', fields)
    },
  }
}
