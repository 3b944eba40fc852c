/**
 * The in-cluster configuration: the service-account token, CA bundle and namespace the kubelet
 * mounts into a pod, and the API server address from the environment.
 *
 * @module
 */
import path from 'node:path'
import type { ClusterConfig } from './cluster-config.js'
import { KubeconfigError } from './kubeconfig-error.js'
import { describeFsError, nonEmpty, readOptional } from './read-text-file.js'
import type { ReadTextFile } from './read-text-file.js'

/** Where the kubelet mounts a pod's service-account token, CA bundle and namespace. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount'

/** Reads the pod's service account, or says why this is not a pod, as the in-cluster loader does. */
export async function loadInClusterConfig(
  env: NodeJS.ProcessEnv,
  dir: string,
  readFile: ReadTextFile
): Promise<ClusterConfig | string> {
  const host = env['KUBERNETES_SERVICE_HOST']
  const port = env['KUBERNETES_SERVICE_PORT']
  if (host === undefined || host === '' || port === undefined || port === '') {
    return 'KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT not set'
  }
  const tokenPath = path.join(dir, 'token')
  try {
    await readFile(tokenPath)
  } catch (error) {
    // A pod with automountServiceAccountToken: false lands here; fall through to ~/.kube/config.
    return `cannot read ${tokenPath}: ${describeFsError(error)}`
  }
  const caPath = path.join(dir, 'ca.crt')
  let caPem: string | undefined
  try {
    // Without ca.crt the system roots are used, as client-go does after logging the failure.
    caPem = await readOptional(caPath, readFile)
  } catch (error) {
    throw new KubeconfigError(
      `in-cluster config: cannot read ${caPath}: ${describeFsError(error)}; check the service-account mount`,
      { cause: error }
    )
  }
  const namespaceFile = await readOptional(path.join(dir, 'namespace'), readFile).catch(
    () => undefined
  )
  // POD_NAMESPACE first, as client-go's in-cluster namespace lookup does.
  const namespace = nonEmpty(env['POD_NAMESPACE']) ?? nonEmpty(namespaceFile?.trim()) ?? 'default'
  // Bracket an IPv6 service host, as net.JoinHostPort does.
  const hostPort = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`
  return {
    server: `https://${hostPort}`,
    ...(caPem === undefined ? {} : { caPem }),
    auth: { type: 'tokenFile', path: tokenPath },
    namespace,
    source: 'in-cluster',
  }
}
