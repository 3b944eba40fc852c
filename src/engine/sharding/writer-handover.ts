/**
 * Moving from leader election to a ring without two writers: a replica joins the ring only once
 * no live holder of the leader-election Lease is left (released, expired or absent).
 *
 * @remarks
 * A holder is live while its Lease keeps changing: one whose `resourceVersion` has not changed
 * for its `leaseDurationSeconds` on this replica's clock is dead, as the member table judges ring
 * members (clocks of different machines are never compared). A released Lease (empty holder) frees
 * at once, so a leader that got SIGTERM hands over as soon as its last sync ended.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import { abortableSleep } from '../../runtime/clock/abortable-sleep.js'

/** Options of {@link waitForNoLiveHolder}. */
export interface NoLiveHolderOptions {
  /** Reads the Leases to wait for (none: nothing to wait for). */
  readonly read: (signal: AbortSignal) => Promise<readonly KubeObject[]>
  readonly retryPeriodMs: number
  readonly signal: AbortSignal
  /** Local clock, in ms. */
  readonly now?: () => number
  /** Called at every round that still finds live holders. */
  readonly onWait?: (holders: readonly string[]) => void
  /** Called when a read failed (the wait goes on: a failed read proves nothing). */
  readonly onError?: (error: unknown) => void
}

/** The holder and lease duration of a Lease; undefined when released. */
function holderOf(lease: KubeObject): { holder: string; durationMs: number } | undefined {
  const spec = isJsonObject(lease['spec']) ? lease['spec'] : {}
  const holder = typeof spec['holderIdentity'] === 'string' ? spec['holderIdentity'] : ''
  if (holder === '') return undefined
  const seconds = spec['leaseDurationSeconds']
  return { holder, durationMs: (typeof seconds === 'number' ? seconds : 15) * 1000 }
}

/**
 * Resolves once none of the Leases `read` returns has a live holder, or when `signal` aborts
 * (then it resolves too: the caller checks the signal). Read failures are retried.
 */
export async function waitForNoLiveHolder(options: NoLiveHolderOptions): Promise<void> {
  const now = options.now ?? Date.now
  const seen = new Map<string, { version: string; sinceMs: number }>()
  while (!options.signal.aborted) {
    let live: string[] | undefined
    try {
      const leases = await options.read(options.signal)
      const at = now()
      live = []
      for (const lease of leases) {
        const held = holderOf(lease)
        if (held === undefined) continue
        const key = `${lease.metadata.namespace ?? ''}/${lease.metadata.name ?? ''}`
        const version = lease.metadata.resourceVersion ?? ''
        const known = seen.get(key)
        const since = known?.version === version ? known.sinceMs : at
        seen.set(key, { version, sinceMs: since })
        if (at - since < held.durationMs) live.push(held.holder)
      }
    } catch (error) {
      options.onError?.(error)
    }
    if (live?.length === 0) return
    if (live !== undefined) options.onWait?.(live)
    await abortableSleep(options.retryPeriodMs, options.signal)
  }
}
