// Watches the in-cluster engine from the host while it is upgraded: its Pods (address, when
// ready, when terminating, when gone) and its leader Lease (each new holder and its acquireTime),
// polled every 100 ms. From these: which Pod an address was at a given time (to attribute the
// audit log's writes), the fewest ready Pods in a window (the PodDisruptionBudget), and each
// leadership handover (the old leader Pod's termination to the new holder's acquireTime).
import type { KubeObject } from '../../src/core/kube-object.js'
import type { DynamicClient, ResourceRef } from '../../src/kube/dynamic-client.js'

const PODS: ResourceRef = { group: '', version: 'v1', resource: 'pods', namespaced: true }
const LEASES: ResourceRef = {
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  namespaced: true,
}
const POLL_MS = 100

/** One engine Pod as the observer saw it (times in ms since the epoch, as seen). */
export interface ObservedPod {
  readonly name: string
  ip: string | undefined
  readonly firstSeenMs: number
  readyMs: number | undefined
  terminatingMs: number | undefined
  goneMs: number | undefined
}

/** A new leader: the Pod its identity (`<pod>_<uuid>`) names and the Lease's acquireTime. */
export interface LeaderChange {
  readonly pod: string
  readonly acquireMs: number
}

/** A change of leader, timed from the old leader Pod's termination. */
export interface Handover {
  readonly from: string
  readonly to: string
  /** The new holder's acquireTime minus when the old leader Pod was seen terminating. */
  readonly handoverMs: number
}

function isReady(pod: KubeObject): boolean {
  const status = pod['status'] as { conditions?: { type: string; status: string }[] } | undefined
  const conditions = status?.conditions
  return conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false
}

/** Polls an engine's Pods (by label selector) and, when named, its leader Lease. */
export class EngineObserver {
  readonly pods = new Map<string, ObservedPod>()
  readonly leaders: LeaderChange[] = []
  /** Ready Pods that are not terminating, at each poll. */
  readonly readySamples: { readonly atMs: number; readonly ready: number }[] = []
  readonly #client: DynamicClient
  readonly #namespace: string
  readonly #selector: string
  readonly #lease: string | undefined
  #running = false
  #loop: Promise<void> | undefined

  constructor(client: DynamicClient, namespace: string, selector: string, lease?: string) {
    this.#client = client
    this.#namespace = namespace
    this.#selector = selector
    this.#lease = lease
  }

  #observePods(items: readonly KubeObject[], now: number): void {
    const seen = new Set<string>()
    let ready = 0
    for (const item of items) {
      const name = item.metadata.name ?? ''
      seen.add(name)
      const pod = this.pods.get(name) ?? {
        name,
        ip: undefined,
        firstSeenMs: now,
        readyMs: undefined,
        terminatingMs: undefined,
        goneMs: undefined,
      }
      pod.ip ??= (item['status'] as { podIP?: string } | undefined)?.podIP
      if (isReady(item)) pod.readyMs ??= now
      if (item.metadata.deletionTimestamp !== undefined) pod.terminatingMs ??= now
      else if (isReady(item)) ready++
      this.pods.set(name, pod)
    }
    for (const pod of this.pods.values()) if (!seen.has(pod.name)) pod.goneMs ??= now
    this.readySamples.push({ atMs: now, ready })
  }

  async #observeLease(): Promise<void> {
    if (this.#lease === undefined) return
    const lease = await this.#client.get(LEASES, this.#lease, { namespace: this.#namespace })
    const spec = lease['spec'] as { holderIdentity?: string; acquireTime?: string } | undefined
    const pod = spec?.holderIdentity?.split('_')[0] ?? ''
    if (pod === '' || spec?.acquireTime === undefined) return
    const acquireMs = Date.parse(spec.acquireTime) + micros(spec.acquireTime)
    if (this.leaders.at(-1)?.acquireMs !== acquireMs) this.leaders.push({ pod, acquireMs })
  }

  /** Starts polling. */
  start(): void {
    this.#running = true
    this.#loop = (async () => {
      while (this.#running) {
        const now = Date.now()
        try {
          const list = await this.#client.list(PODS, {
            namespace: this.#namespace,
            labelSelector: this.#selector,
          })
          this.#observePods(list.items, now)
          await this.#observeLease()
        } catch {
          // A poll lost (the Lease not yet created, a slow answer): the next one sees it.
        }
        await new Promise((r) => setTimeout(r, POLL_MS))
      }
    })()
  }

  /** Stops polling. */
  async stop(): Promise<void> {
    this.#running = false
    await this.#loop
  }

  /** The Pod that had `ip` at `atMs` (the latest seen before it: addresses are reused). */
  podAt(ip: string, atMs: number): string | undefined {
    let found: ObservedPod | undefined
    for (const pod of this.pods.values()) {
      if (pod.ip !== ip || pod.firstSeenMs > atMs + 1000) continue
      if (found === undefined || pod.firstSeenMs > found.firstSeenMs) found = pod
    }
    return found?.name
  }

  /** The fewest ready, non-terminating Pods seen from `fromMs` to `toMs`. */
  minReady(fromMs: number, toMs: number): number {
    const window = this.readySamples.filter((s) => s.atMs >= fromMs && s.atMs <= toMs)
    return Math.min(...window.map((s) => s.ready))
  }

  /** Each change of leader whose old leader Pod was seen terminating. */
  handovers(): Handover[] {
    const out: Handover[] = []
    for (let i = 1; i < this.leaders.length; i++) {
      const from = this.leaders[i - 1]
      const to = this.leaders[i]
      const ended = from === undefined ? undefined : this.pods.get(from.pod)?.terminatingMs
      if (from === undefined || to === undefined || ended === undefined) continue
      out.push({ from: from.pod, to: to.pod, handoverMs: to.acquireMs - ended })
    }
    return out
  }

  /** Each replica's times (ms) of becoming leader, keyed by Pod name. */
  leadershipStarts(): Map<string, number[]> {
    const starts = new Map<string, number[]>()
    for (const { pod, acquireMs } of this.leaders) {
      starts.set(pod, [...(starts.get(pod) ?? []), acquireMs])
    }
    return starts
  }
}

/** The sub-millisecond part of an RFC 3339 time with microseconds, which Date.parse drops. */
function micros(text: string): number {
  const match = /\.\d{3}(\d+)Z$/.exec(text)
  return match === null ? 0 : Number(`0.${match[1] ?? '0'}`)
}
