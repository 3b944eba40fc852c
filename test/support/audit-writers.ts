// Reads kube-apiserver's audit log and checks that no parent had two writers at once: every
// change of the replica writing a parent (or its children) must be separated by a ring the new
// writer agreed on after the old writer's last write completed.

import { readFileSync } from 'node:fs'

/** One write request of the audit log, as the checks need it. */
export interface AuditWrite {
  /** The parent it concerns (a child is named `<parent>` or `<parent>.<suffix>`). */
  readonly parent: string
  readonly replica: string
  readonly verb: string
  readonly resource: string
  /** When the server received it (ms since the epoch, with fractions). */
  readonly receivedMs: number
  /** When the response was complete. */
  readonly completedMs: number
  /** The response's HTTP status code (0 when the log has none). */
  readonly code: number
}

interface AuditEvent {
  readonly verb?: string
  readonly userAgent?: string
  readonly objectRef?: { resource?: string; namespace?: string; name?: string }
  readonly requestReceivedTimestamp?: string
  readonly stageTimestamp?: string
  readonly responseStatus?: { code?: number }
}

/** Parses the writes to `resources` in `namespace` made by user agents `<prefix><replica>`. */
export function readAuditWrites(
  path: string,
  namespace: string,
  resources: readonly string[],
  agentPrefix: string
): AuditWrite[] {
  const writes: AuditWrite[] = []
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue
    const event = JSON.parse(line) as AuditEvent
    const ref = event.objectRef
    const agent = event.userAgent ?? ''
    if (ref?.namespace !== namespace || !resources.includes(ref.resource ?? '')) continue
    if (!agent.startsWith(agentPrefix) || ref.name === undefined) continue
    writes.push({
      // A parent's children are named after it: `<parent>` or `<parent>.<suffix>`.
      parent: ref.name.split('.')[0] ?? ref.name,
      replica: agent.slice(agentPrefix.length).split(' ')[0] ?? '',
      verb: event.verb ?? '',
      resource: ref.resource ?? '',
      receivedMs:
        Date.parse(event.requestReceivedTimestamp ?? '') + micros(event.requestReceivedTimestamp),
      completedMs: Date.parse(event.stageTimestamp ?? '') + micros(event.stageTimestamp),
      code: event.responseStatus?.code ?? 0,
    })
  }
  return writes.sort((a, b) => a.receivedMs - b.receivedMs)
}

/** The sub-millisecond part of an RFC 3339 time with microseconds, which Date.parse drops. */
function micros(text: string | undefined): number {
  const match = /\.\d{3}(\d+)Z$/.exec(text ?? '')
  return match === null ? 0 : Number(`0.${match[1] ?? '0'}`)
}

/** A change of writer of one parent without a ring agreed in between: two writers at once. */
export interface DoubleWriter {
  readonly parent: string
  readonly from: AuditWrite
  readonly to: AuditWrite
}

/**
 * Finds every change of writer (per parent, in time order) that no ring agreement of the new
 * writer separates from the old writer's last write. `agreedAt` gives the times (ms) at which
 * each replica started serving a new ring. `toleranceMs` absorbs the log's millisecond
 * rounding.
 */
export function doubleWriters(
  writes: readonly AuditWrite[],
  agreedAt: ReadonlyMap<string, readonly number[]>,
  toleranceMs = 1
): DoubleWriter[] {
  const byParent = new Map<string, AuditWrite[]>()
  for (const write of writes) {
    const list = byParent.get(write.parent) ?? []
    list.push(write)
    byParent.set(write.parent, list)
  }
  const found: DoubleWriter[] = []
  for (const [parent, list] of byParent) {
    for (let i = 1; i < list.length; i++) {
      const from = list[i - 1]
      const to = list[i]
      if (from === undefined || to === undefined || from.replica === to.replica) continue
      const separated = (agreedAt.get(to.replica) ?? []).some(
        (t) => t + toleranceMs >= from.completedMs && t - toleranceMs <= to.receivedMs
      )
      if (!separated) found.push({ parent, from, to })
    }
  }
  return found
}

/**
 * Parents whose children were not created exactly once each (`perParent` creates) or were ever
 * deleted, from the writes to `resource` (children named after their parents): each is a lost or
 * duplicated child. A create the server refused (409: it existed) is counted as an attempted
 * second create, except one by the replica that had itself created a child of that parent before:
 * its own write not yet in its cache, which the engine shrugs off (AlreadyExists) and which writes
 * nothing. A refused create by any other replica (one that synced before its caches held the
 * children) still counts.
 */
export function childFaults(
  writes: readonly AuditWrite[],
  resource: string,
  parents: readonly string[],
  perParent = 1
): string[] {
  const creates = new Map<string, AuditWrite[]>()
  const deletes = new Map<string, number>()
  for (const write of writes) {
    if (write.resource !== resource) continue
    if (write.verb === 'create')
      creates.set(write.parent, [...(creates.get(write.parent) ?? []), write])
    if (write.verb === 'delete') deletes.set(write.parent, (deletes.get(write.parent) ?? 0) + 1)
  }
  return parents.flatMap((parent) => {
    const created = creates.get(parent) ?? []
    const deleted = deletes.get(parent) ?? 0
    const counted = created.filter((w, i) => !ownStaleCreate(w, created.slice(0, i)))
    if (counted.length === perParent && deleted === 0) return []
    // Who asked and what the server answered tells a stale-cache retry (one replica, 409) from
    // two writers or a lost child.
    const by = created.map((w) => `${w.replica} ${w.code}`).join(', ')
    return [`${parent}: created ${created.length} times (${by}), deleted ${deleted} times`]
  })
}

/** A 409 create by a replica whose own create of the same parent's children came before it. */
function ownStaleCreate(write: AuditWrite, earlier: readonly AuditWrite[]): boolean {
  return (
    write.code === 409 &&
    earlier.some((w) => w.replica === write.replica && w.code >= 200 && w.code < 300)
  )
}
