/**
 * What `metactl ring` prints: the members of a sharding ring as their Leases tell it, whether
 * they agree on one ring, and which member owns a given object.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import { fnv1a64, hex16 } from '../../runtime/ring/fnv1a64.js'
import { HashRing } from '../../runtime/ring/hash-ring.js'
import { viewId } from '../../runtime/ring/member-table.js'
import { memberRecord } from '../../runtime/ring/member-lease.js'
import type { ShardField } from '../../runtime/ring/shard-selector.js'
import { shardValue } from '../../runtime/ring/shard-selector.js'

/** One member as its Lease shows it. */
export interface RingMember {
  readonly identity: string
  readonly state: 'live' | 'expired' | 'released'
  readonly announced: string
  /** Seconds since its last renewal, by this machine's clock. */
  readonly renewedAgoSeconds: number | undefined
}

/** The ring as the Leases show it at `nowMs`. */
export interface RingReport {
  readonly members: readonly RingMember[]
  /** The ring of the live members. */
  readonly ring: HashRing
  /** Whether every live member announced the ring of the live members. */
  readonly agreed: boolean
  readonly view: string
}

/**
 * Reads the ring's Leases. Liveness compares each Lease's `renewTime` with this machine's clock
 * (the engines themselves never compare clocks), so it is a diagnostic, not the engines' view.
 */
export function ringReport(leases: readonly KubeObject[], nowMs: number): RingReport {
  const members = leases.flatMap((lease): RingMember[] => {
    const record = memberRecord(lease)
    if (record === undefined) return []
    const spec = isJsonObject(lease['spec']) ? lease['spec'] : {}
    const renewed = typeof spec['renewTime'] === 'string' ? Date.parse(spec['renewTime']) : NaN
    const durationMs =
      (typeof spec['leaseDurationSeconds'] === 'number' ? spec['leaseDurationSeconds'] : 0) * 1000
    const state = record.released
      ? 'released'
      : Number.isNaN(renewed) || nowMs - renewed >= durationMs
        ? 'expired'
        : 'live'
    return [
      {
        identity: record.identity,
        state,
        announced: record.view,
        renewedAgoSeconds: Number.isNaN(renewed) ? undefined : Math.round((nowMs - renewed) / 1000),
      },
    ]
  })
  const live = members.filter((m) => m.state === 'live')
  const view = viewId(live.map((m) => m.identity))
  return {
    members: [...members].sort((a, b) => (a.identity < b.identity ? -1 : 1)),
    ring: new HashRing(live.map((m) => m.identity)),
    agreed: live.length > 0 && live.every((m) => m.announced === view),
    view,
  }
}

/** The report as lines for a terminal. */
export function formatRingReport(name: string, namespace: string, report: RingReport): string[] {
  const live = report.members.filter((m) => m.state === 'live').length
  const lines = [
    `ring ${name} in ${namespace}: ${live} live member${live === 1 ? '' : 's'}, ` +
      (report.agreed ? `agreed on ring ${report.view}` : 'handoff in progress (members disagree)'),
  ]
  const width = Math.max(6, ...report.members.map((m) => m.identity.length))
  lines.push(`${'MEMBER'.padEnd(width)}  STATE     ANNOUNCED         RENEWED`)
  for (const m of report.members) {
    const ago = m.renewedAgoSeconds === undefined ? '-' : `${m.renewedAgoSeconds}s ago`
    lines.push(
      `${m.identity.padEnd(width)}  ${m.state.padEnd(8)}  ${(m.announced || '-').padEnd(16)}  ${ago}`
    )
  }
  return lines
}

/** Which member owns `object` when parents are hashed by `field`. */
export function ownerLine(object: KubeObject, field: ShardField, ring: HashRing): string {
  const value = shardValue(field, object.metadata)
  const hash = fnv1a64(value)
  const owner = ring.ownerOf(hash) ?? 'nobody (no live member)'
  return `${object.kind} ${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}: ${field} ${value} hashes to 0x${hex16(hash)}, owned by ${owner}`
}
