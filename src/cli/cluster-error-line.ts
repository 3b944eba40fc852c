/**
 * The one place that turns "no cluster" failures into the single line `metactl` prints: an
 * unreachable API server, a missing or broken kubeconfig, rejected credentials, missing
 * control-plane binaries. Each line says what to do next; none carries a stack.
 *
 * @module
 */
import { UnauthorizedError } from '../kube/api-error.js'
import { ConnectionError } from '../kube/connection-error.js'
import { ExecCredentialError } from '../kube/exec-credentials.js'
import { KubeconfigError } from '../kube/kubeconfig-error.js'
import { ProxyConfigError } from '../kube/proxy/proxy-resolver.js'
import { ProxyTunnelError } from '../kube/proxy/proxy-tunnel-connector.js'
import { MissingBinariesError } from '../cluster/control-plane-binaries.js'

/** What to run for a local cluster, appended to every "cannot reach" line. */
export const LOCAL_CLUSTER_HINT: string =
  'start the local cluster with `metactl cluster up` (then export the KUBECONFIG it prints), ' +
  'or pick a running cluster with --kubeconfig/--context'

// Errors wrapped by callers (`new Error(..., { cause })`) still count: the cause is what failed.
function* causes(error: unknown): Generator {
  const seen = new Set<unknown>()
  for (let current = error; current !== undefined && !seen.has(current);) {
    seen.add(current)
    yield current
    current = current instanceof Error ? current.cause : undefined
  }
}

function unreachable(error: ConnectionError): string {
  for (const cause of causes(error)) {
    if (cause instanceof ProxyTunnelError) {
      return (
        `cannot reach the Kubernetes API server at ${error.server} through the ${cause.message}; ` +
        'check HTTPS_PROXY/NO_PROXY or the kubeconfig proxy-url'
      )
    }
  }
  const why = error.code ?? 'no answer'
  return `cannot reach the Kubernetes API server at ${error.server} (${why}): ${LOCAL_CLUSTER_HINT}`
}

/**
 * The line to print for an error that means "no usable cluster", or `undefined` for any other
 * error.
 */
export function clusterErrorLine(error: unknown): string | undefined {
  for (const cause of causes(error)) {
    if (cause instanceof ConnectionError) return unreachable(cause)
    if (cause instanceof MissingBinariesError) return cause.message
    if (
      cause instanceof KubeconfigError ||
      cause instanceof ExecCredentialError ||
      cause instanceof ProxyConfigError
    ) {
      return oneLine(cause.message)
    }
    if (cause instanceof UnauthorizedError) {
      return (
        `the API server refused the credentials (401 Unauthorized on ${cause.request.path}): ` +
        'check the user of your kubeconfig context, or pick another with --kubeconfig/--context'
      )
    }
  }
  return undefined
}

function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, ' ').trim()
}
