// The engine's writes as kube-apiserver's audit log records them, for the in-cluster fault tests.
// With leader election every replica sends the same user agent (`metacontroller-ts`), so a
// replica is told apart by its source address, its Pod's IP (the Pods reach the API server
// through the `kubernetes` Service, which rewrites only the destination).
import { readFileSync } from 'node:fs'

/** One write of the engine to the parents or their children. */
export interface EngineWrite {
  /** The writing replica's Pod IP. */
  readonly ip: string
  readonly verb: string
  /** `configmaps`, `faultparents` or `faultparents/status`. */
  readonly resource: string
  readonly name: string
  /** When the server received it, and when the response was complete (ms since the epoch). */
  readonly receivedMs: number
  readonly completedMs: number
  readonly code: number
}

interface AuditEvent {
  readonly verb?: string
  readonly userAgent?: string
  readonly sourceIPs?: readonly string[]
  readonly objectRef?: {
    resource?: string
    subresource?: string
    namespace?: string
    name?: string
  }
  readonly requestReceivedTimestamp?: string
  readonly stageTimestamp?: string
  readonly responseStatus?: { code?: number }
}

/** Milliseconds of an RFC 3339 time with microseconds (Date.parse keeps three digits). */
function timeMs(text: string | undefined): number {
  const match = /\.\d{3}(\d+)Z$/.exec(text ?? '')
  return Date.parse(text ?? '') + (match === null ? 0 : Number(`0.${match[1] ?? '0'}`))
}

/** Reads the engine's writes in `namespace` (user agent `metacontroller-ts…`), in time order. */
export function readEngineWrites(path: string, namespace: string): EngineWrite[] {
  const writes: EngineWrite[] = []
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue
    const event = JSON.parse(line) as AuditEvent
    const ref = event.objectRef
    if (ref?.namespace !== namespace || ref.name === undefined) continue
    if (!(event.userAgent ?? '').startsWith('metacontroller-ts')) continue
    writes.push({
      ip: event.sourceIPs?.[0] ?? '',
      verb: event.verb ?? '',
      resource: `${ref.resource ?? ''}${ref.subresource === undefined ? '' : `/${ref.subresource}`}`,
      name: ref.name,
      receivedMs: timeMs(event.requestReceivedTimestamp),
      completedMs: timeMs(event.stageTimestamp),
      code: event.responseStatus?.code ?? 0,
    })
  }
  return writes.sort((a, b) => a.receivedMs - b.receivedMs)
}

/** A stretch of consecutive writes by one replica. */
export interface WriterRun {
  readonly ip: string
  readonly writes: number
  readonly firstMs: number
  /** When the run's last response was complete. */
  readonly lastDoneMs: number
}

/** The writes (in time order) as runs of one writer each. */
export function writerRuns(writes: readonly EngineWrite[]): WriterRun[] {
  const runs: WriterRun[] = []
  for (const write of writes) {
    const last = runs.at(-1)
    if (last?.ip === write.ip) {
      runs[runs.length - 1] = {
        ...last,
        writes: last.writes + 1,
        lastDoneMs: Math.max(last.lastDoneMs, write.completedMs),
      }
    } else {
      runs.push({
        ip: write.ip,
        writes: 1,
        firstMs: write.receivedMs,
        lastDoneMs: write.completedMs,
      })
    }
  }
  return runs
}

/**
 * Every sign of two writers at once among `writes` (one fault's window, in which leadership
 * changes at most once per replica): a replica writing again after another took over, or a new
 * writer's first write received before the old writer's last response was complete.
 */
export function doubleWrites(writes: readonly EngineWrite[]): string[] {
  const runs = writerRuns(writes)
  const found: string[] = []
  runs.forEach((run, i) => {
    const before = runs.slice(0, i)
    const previous = before.at(-1)
    if (before.some((r) => r.ip === run.ip)) {
      found.push(
        `${run.ip} wrote again (${run.writes} writes) after ${previous?.ip ?? ''} took over`
      )
    }
    if (previous !== undefined && run.firstMs < previous.lastDoneMs) {
      found.push(
        `${run.ip} wrote ${(previous.lastDoneMs - run.firstMs).toFixed(1)} ms before ` +
          `${previous.ip}'s last write was done`
      )
    }
  })
  return found
}

/** Writes whose request was received in [fromMs, toMs]. */
export function writesBetween(
  writes: readonly EngineWrite[],
  fromMs: number,
  toMs: number
): EngineWrite[] {
  return writes.filter((w) => w.receivedMs >= fromMs && w.receivedMs <= toMs)
}
