// The audit log's writes of the in-cluster engine, attributed to the engine Pod that made each:
// by its source address (Pod traffic to the API server is not masqueraded on the real node) and
// the Pod that had that address then. With leader election every replica sends the same user
// agent, so the address is what tells them apart; old and new releases alike.
import { readFileSync } from 'node:fs'
import type { AuditWrite } from './audit-writers.js'

interface AuditEvent {
  readonly verb?: string
  readonly userAgent?: string
  readonly sourceIPs?: readonly string[]
  readonly objectRef?: { resource?: string; namespace?: string; name?: string }
  readonly requestReceivedTimestamp?: string
  readonly stageTimestamp?: string
  readonly responseStatus?: { code?: number }
}

/** The sub-millisecond part of an RFC 3339 time with microseconds, which Date.parse drops. */
function timeMs(text: string | undefined): number {
  const match = /\.\d{3}(\d+)Z$/.exec(text ?? '')
  return Date.parse(text ?? '') + (match === null ? 0 : Number(`0.${match[1] ?? '0'}`))
}

/** The engine's writes, and how many came from an address no engine Pod had (should be 0). */
export interface EngineWrites {
  readonly writes: AuditWrite[]
  readonly unattributed: number
}

/**
 * The engine's writes (user agent `metacontroller-ts…`) to `resources` in `namespace`, each with
 * `replica` the Pod `podAt` names for its source address at its time. A child is named
 * `<parent>.<i>`.
 */
export function engineWrites(
  path: string,
  namespace: string,
  resources: readonly string[],
  podAt: (ip: string, atMs: number) => string | undefined
): EngineWrites {
  const writes: AuditWrite[] = []
  let unattributed = 0
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue
    const event = JSON.parse(line) as AuditEvent
    const ref = event.objectRef
    if (ref?.namespace !== namespace || !resources.includes(ref.resource ?? '')) continue
    if (!(event.userAgent ?? '').startsWith('metacontroller-ts') || ref.name === undefined) continue
    const receivedMs = timeMs(event.requestReceivedTimestamp)
    const replica = podAt(event.sourceIPs?.[0] ?? '', receivedMs)
    if (replica === undefined) {
      unattributed++
      continue
    }
    writes.push({
      parent: ref.name.split('.')[0] ?? ref.name,
      replica,
      verb: event.verb ?? '',
      resource: ref.resource ?? '',
      receivedMs,
      completedMs: timeMs(event.stageTimestamp),
      code: event.responseStatus?.code ?? 0,
    })
  }
  return { writes: writes.sort((a, b) => a.receivedMs - b.receivedMs), unattributed }
}

/** How many writes each replica made. */
export function writesPerReplica(writes: readonly AuditWrite[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const write of writes) counts.set(write.replica, (counts.get(write.replica) ?? 0) + 1)
  return counts
}
