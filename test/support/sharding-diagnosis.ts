// What a failed sharding test keeps so that it can be diagnosed after the fact: every replica's
// log, the metrics of those still running, how each process ended, and the parents that had not
// converged with, for each, who should own it on every running replica's last ring and who
// wrote it last.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { request } from 'undici'
import type { KubeObject } from '../../src/core/kube-object.js'
import { isJsonObject } from '../../src/core/kube-object.js'
import { fnv1a64 } from '../../src/runtime/ring/fnv1a64.js'
import { HashRing } from '../../src/runtime/ring/hash-ring.js'
import type { AuditWrite } from './audit-writers.js'
import type { SpawnedEngine } from './spawned-engine.js'

/** One `metactl run` process a world started (an identity may be started more than once). */
export interface WorldReplica {
  readonly identity: string
  /** `identity`, or `identity#n` for its n-th restart. */
  readonly name: string
  readonly engine: SpawnedEngine
}

/** The parents and children as the test saw them when it failed (none if it could not list). */
export interface WorldState {
  readonly parents: readonly KubeObject[]
  readonly children: readonly KubeObject[]
  /** The audit log's engine writes to parents and children. */
  readonly writes: readonly AuditWrite[]
  /** The rollout's value the parents were waited for; undefined when no rollout was awaited. */
  readonly v: number | undefined
}

/** The `v` of an object's spec, status or labels. */
export function valueOf(object: KubeObject | undefined, path: 'spec' | 'status'): unknown {
  const part = object?.[path]
  return isJsonObject(part) ? part['v'] : undefined
}

/** Members of the last ring a replica served, from its log. */
export function lastRing(engine: SpawnedEngine | undefined): string[] {
  const served = engine?.lines.filter((l) => l['msg'] === 'serving a ring').at(-1)
  return (served?.['members'] as string[] | undefined) ?? []
}

/** The text of a running replica's /metrics, or why it has none. */
async function metricsText(engine: SpawnedEngine): Promise<string> {
  if (engine.process.exitCode !== null || engine.process.signalCode !== null) return '# exited'
  const served = engine.lines.find((l) => l['msg'] === 'serving metrics')
  if (served === undefined) return '# no metrics address logged'
  try {
    const response = await request(`http://${String(served['address'])}/metrics`, {
      signal: AbortSignal.timeout(5000),
    })
    return await response.body.text()
  } catch (error) {
    return `# cannot read: ${error instanceof Error ? error.message : String(error)}`
  }
}

/** One line per parent that is not converged at `v`: its values, owners and last writes. */
function unconverged(state: WorldState, replicas: readonly WorldReplica[]): object[] {
  const childOf = new Map(state.children.map((c) => [c.metadata.name, c]))
  const rings = new Map(
    replicas
      .filter((r) => r.engine.process.exitCode === null && r.engine.process.signalCode === null)
      .map((r) => [r.name, lastRing(r.engine)])
  )
  const lastWrites = new Map<string, AuditWrite[]>()
  for (const write of state.writes) {
    const list = lastWrites.get(write.parent) ?? []
    list.push(write)
    lastWrites.set(write.parent, list.slice(-3))
  }
  return state.parents.flatMap((parent) => {
    const name = parent.metadata.name ?? ''
    const child = childOf.get(name)
    const done =
      valueOf(parent, 'status') === state.v && child?.metadata.labels?.['v'] === String(state.v)
    if (done) return []
    const hash = fnv1a64(parent.metadata.uid ?? '')
    return [
      {
        name,
        uid: parent.metadata.uid,
        spec: valueOf(parent, 'spec'),
        status: valueOf(parent, 'status') ?? null,
        child: child === undefined ? 'missing' : child.metadata.labels?.['v'],
        ownerOnRingOf: Object.fromEntries(
          [...rings].map(([replica, ring]) => [
            replica,
            ring.length === 0 ? 'no ring' : new HashRing(ring).ownerOf(hash),
          ])
        ),
        lastWrites: (lastWrites.get(name) ?? []).map(
          (w) =>
            `${new Date(w.receivedMs).toISOString()} ${w.replica} ${w.verb} ${w.resource} ${w.code}`
        ),
      },
    ]
  })
}

/** Writes the logs, metrics and unconverged parents into `dir`. */
export async function writeDiagnosis(
  dir: string,
  replicas: readonly WorldReplica[],
  state: WorldState
): Promise<void> {
  for (const { name, engine } of replicas) {
    const lines = [...engine.lines.map((l) => JSON.stringify(l)), ...engine.raw]
    writeFileSync(join(dir, `${name}.log`), `${lines.join('\n')}\n`)
    writeFileSync(join(dir, `${name}.metrics`), await metricsText(engine))
  }
  const summary = replicas.map(({ name, engine }) => ({
    name,
    exit: engine.process.exitCode ?? engine.process.signalCode ?? 'running',
    lastRing: lastRing(engine),
    stopped: engine.lines.find((l) => l['msg'] === 'shutting down')?.['reason'] ?? null,
  }))
  writeFileSync(join(dir, 'replicas.json'), `${JSON.stringify(summary, null, 1)}\n`)
  const stuck = unconverged(state, replicas)
  writeFileSync(
    join(dir, 'unconverged.json'),
    `${JSON.stringify({ v: state.v, count: stuck.length, parents: stuck }, null, 1)}\n`
  )
}
