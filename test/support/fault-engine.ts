// The in-cluster engine as the fault tests watch it: who holds the leader Lease (the chart's
// `leaderElection.id`, identities `<pod>_<uuid>`), the Pods' IPs, and their containers.
import { ENGINE_NAMESPACE } from './fault-manifests.js'

/** Runs kubectl on the fault cluster (FaultCluster.kubectl). */
export type Kubectl = (...args: string[]) => Promise<string>

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** The Pod name in a leader-election identity `<hostname>_<uuid>` (the hostname is the Pod's). */
export function podOfIdentity(identity: string): string {
  const at = identity.lastIndexOf('_')
  return at < 0 ? identity : identity.slice(0, at)
}

/** The Pod holding the engine's Lease, or undefined when none does (or the API is down). */
export async function leaderPod(kubectl: Kubectl): Promise<string | undefined> {
  try {
    const holder = await kubectl(
      ...['-n', ENGINE_NAMESPACE, 'get', 'lease', 'metacontroller'],
      ...['-o', 'jsonpath={.spec.holderIdentity}', '--request-timeout=5s']
    )
    return holder.trim() === '' ? undefined : podOfIdentity(holder.trim())
  } catch {
    return undefined
  }
}

/** Polls until a Pod other than `from` holds the Lease; resolves with it and when (ms). */
export async function awaitNewLeader(
  kubectl: Kubectl,
  from: string,
  timeoutMs: number
): Promise<{ pod: string; atMs: number }> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const pod = await leaderPod(kubectl)
    if (pod !== undefined && pod !== from) return { pod, atMs: Date.now() }
    await sleep(200)
  }
  throw new Error(`no replica took the Lease over from ${from} in ${timeoutMs} ms`)
}

/** The engine's Pods: name, IP, the IDs of their containers (restarts give new ones), restarts. */
export async function enginePods(
  kubectl: Kubectl
): Promise<{ name: string; ip: string; containers: string[]; ready: boolean; restarts: number }[]> {
  const list = JSON.parse(
    await kubectl(
      ...['-n', ENGINE_NAMESPACE, 'get', 'pods', '-o', 'json'],
      ...['-l', 'app.kubernetes.io/name=metacontroller-ts']
    )
  ) as {
    items: {
      metadata: { name: string; deletionTimestamp?: string }
      status?: {
        podIP?: string
        containerStatuses?: { containerID?: string; ready?: boolean; restartCount?: number }[]
      }
    }[]
  }
  return list.items
    .filter((p) => p.metadata.deletionTimestamp === undefined)
    .map((p) => ({
      name: p.metadata.name,
      ip: p.status?.podIP ?? '',
      containers: (p.status?.containerStatuses ?? []).flatMap((c) =>
        c.containerID === undefined ? [] : [c.containerID]
      ),
      ready: (p.status?.containerStatuses ?? []).every((c) => c.ready === true),
      restarts: (p.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0),
    }))
}

/** Waits until `count` engine Pods are ready; resolves with them. */
export async function awaitEngineReady(kubectl: Kubectl, count: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs
  let last = ''
  while (Date.now() < deadline) {
    try {
      const pods = await enginePods(kubectl)
      last = JSON.stringify(pods)
      if (pods.length === count && pods.every((p) => p.ready && p.ip !== '')) return pods
    } catch (error) {
      last = String(error)
    }
    await sleep(500)
  }
  throw new Error(`${count} engine Pods not ready in ${timeoutMs} ms: ${last}`)
}
