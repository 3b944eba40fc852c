/**
 * Starts the real node's cluster DNS (cluster-dns-manifests.ts) and waits until it answers, run by
 * the supervisor inside the cluster's network namespace, where the `kube-dns` ClusterIP is routed.
 *
 * @module
 */
import { Resolver } from 'node:dns/promises'
import type { DynamicClient, ResourceRef } from '../../kube/dynamic-client.js'
import type { KubeObject } from '../../core/kube-object.js'
import { waitFor } from '../../runtime/clock/wait-for.js'
import {
  CLUSTER_DNS_IP,
  CLUSTER_DNS_LABELS,
  CLUSTER_DNS_NAMESPACE,
  CLUSTER_DOMAIN,
  clusterDnsObjects,
} from './cluster-dns-manifests.js'
import { KUBERNETES_SERVICE_IP } from './real-node-layout.js'

/** Raised when the cluster DNS does not answer in time; the message names its Pod's state. */
export class ClusterDnsError extends Error {
  override readonly name = 'ClusterDnsError'
}

const RESOURCES: Record<string, ResourceRef> = {
  ServiceAccount: { group: '', version: 'v1', resource: 'serviceaccounts', namespaced: true },
  ClusterRole: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    resource: 'clusterroles',
    namespaced: false,
  },
  ClusterRoleBinding: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    resource: 'clusterrolebindings',
    namespaced: false,
  },
  ConfigMap: { group: '', version: 'v1', resource: 'configmaps', namespaced: true },
  Deployment: { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true },
  Service: { group: '', version: 'v1', resource: 'services', namespaced: true },
}
const PODS: ResourceRef = { group: '', version: 'v1', resource: 'pods', namespaced: true }

/** The name whose answer proves the DNS works end to end (API watch, Service, kube-proxy). */
const PROBE_NAME = `kubernetes.default.svc.${CLUSTER_DOMAIN}`

// One query to the kube-dns ClusterIP; true when it gives the `kubernetes` Service's address.
async function answers(): Promise<boolean> {
  const resolver = new Resolver({ timeout: 1000, tries: 1 })
  resolver.setServers([CLUSTER_DNS_IP])
  try {
    return (await resolver.resolve4(PROBE_NAME)).includes(KUBERNETES_SERVICE_IP)
  } catch {
    return false
  } finally {
    resolver.cancel()
  }
}

// Phase, readiness and each container's waiting/terminated reason, for the timeout message.
function describePod(pod: KubeObject): string {
  const status = (pod['status'] ?? {}) as {
    phase?: string
    conditions?: { type: string; status: string }[]
    containerStatuses?: {
      ready?: boolean
      restartCount?: number
      state?: Record<string, { reason?: string; message?: string }>
    }[]
  }
  const ready = status.conditions?.find((c) => c.type === 'Ready')?.status ?? 'unknown'
  const containers = (status.containerStatuses ?? []).map((c) => {
    const [state, detail] = Object.entries(c.state ?? {})[0] ?? ['unknown', {}]
    const why = [detail.reason, detail.message].filter((s) => s !== undefined).join(': ')
    return `${state}${why === '' ? '' : ` (${why})`}, ${c.restartCount ?? 0} restarts`
  })
  return `Pod ${pod.metadata.name ?? '?'}: phase ${status.phase ?? 'unknown'}, Ready ${ready}${
    containers.length > 0 ? `, container ${containers.join('; ')}` : ''
  }`
}

async function dnsPodsState(client: DynamicClient): Promise<string> {
  try {
    const pods = await client.list(PODS, {
      namespace: CLUSTER_DNS_NAMESPACE,
      labelSelector: Object.entries(CLUSTER_DNS_LABELS)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
    })
    if (pods.items.length === 0) return 'no coredns Pod exists (see the Deployment and its events)'
    return pods.items.map(describePod).join('\n')
  } catch (error) {
    return `its Pods could not be listed: ${error instanceof Error ? error.message : String(error)}`
  }
}

/**
 * Creates the cluster DNS objects and resolves once `kubernetes.default.svc.cluster.local` is
 * answered at {@link CLUSTER_DNS_IP}; must run inside the cluster's network namespace.
 *
 * @throws {@link ClusterDnsError} after `timeoutMs` without an answer, naming the Pod's state.
 */
export async function startClusterDns(
  client: DynamicClient,
  timeoutMs: number,
  onProgress: (message: string) => void
): Promise<void> {
  const started = Date.now()
  for (const object of clusterDnsObjects()) {
    const ref = RESOURCES[object.kind]
    if (ref === undefined) throw new Error(`no resource known for ${object.kind}`)
    await client.create(ref, object, ref.namespaced ? { namespace: CLUSTER_DNS_NAMESPACE } : {})
  }
  onProgress(`cluster DNS: coredns created, waiting for kube-dns at ${CLUSTER_DNS_IP} to answer`)
  try {
    await waitFor(answers, { timeoutMs, intervalMs: 500, description: 'the cluster DNS' })
  } catch {
    throw new ClusterDnsError(
      `the cluster DNS (kube-system/coredns) did not answer ${PROBE_NAME} at ${CLUSTER_DNS_IP} ` +
        `within ${Math.round(timeoutMs / 1000)} s:\n${await dnsPodsState(client)}`
    )
  }
  onProgress(
    `cluster DNS answers at ${CLUSTER_DNS_IP} in ${((Date.now() - started) / 1000).toFixed(1)} s`
  )
}
