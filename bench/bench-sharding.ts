// Pieces of bench/sharding-scale.ts: reading a replica's metrics, which namespaces a member of a
// ring owns, how many parents a ring change moves, probe parents, and waiting for idle queues.
import type { KubeObject } from '../src/core/kube-object.js'
import { fnv1a64 } from '../src/runtime/ring/fnv1a64.js'
import { HashRing } from '../src/runtime/ring/hash-ring.js'
import { waitFor } from '../src/testing/index.js'
import type { ControlPlane } from '../src/testing/index.js'
import { PARENTS, benchParent, parentSynced } from './bench-parents.js'
import type { EngineProcess } from './engine-process-handle.js'

/** A metric of a replica, summed over the series whose line contains `labelPart`. */
export async function metric(engine: EngineProcess, name: string, labelPart = ''): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${engine.metricsPort}/metrics`)).text()
  let sum = 0
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
    if (line.includes(labelPart)) sum += Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return sum
}

/** The namespaces `member` owns in the ring of `members` (sharded by namespace). */
export function namespacesOf(
  namespaces: Iterable<string>,
  members: readonly string[],
  member: string
): string[] {
  const ring = new HashRing(members)
  return [...namespaces].filter((n) => ring.ownerOf(fnv1a64(n)) === member)
}

/** Parents whose owner differs between the rings of `before` and `after` (sharded by namespace). */
export function parentsMoved(
  parentsPerNamespace: ReadonlyMap<string, number>,
  before: readonly string[],
  after: readonly string[]
): number {
  const from = new HashRing(before)
  const to = new HashRing(after)
  let moved = 0
  for (const [namespace, count] of parentsPerNamespace) {
    const hash = fnv1a64(namespace)
    if (from.ownerOf(hash) !== to.ownerOf(hash)) moved += count
  }
  return moved
}

/** Creates a probe parent and resolves with the ms from `sinceMs` until it is synced. */
export async function probeSynced(
  plane: ControlPlane,
  name: string,
  namespace: string,
  sinceMs: number
): Promise<number> {
  await plane.client.create(PARENTS, benchParent(name, namespace, 1))
  await waitFor(
    async () => {
      const probe: KubeObject = await plane.client.get(PARENTS, name, { namespace })
      return parentSynced(probe) ? true : undefined
    },
    { timeoutMs: 600_000, intervalMs: 200, description: `the probe parent ${name} synced` }
  )
  return performance.now() - sinceMs
}

/** Resolves once `engine` serves a ring of `members` members. */
export async function servesRingOf(engine: EngineProcess, members: number): Promise<void> {
  await waitFor(
    async () =>
      (await metric(engine, 'metacontroller_shard_ring_members')) === members ? true : undefined,
    { timeoutMs: 600_000, intervalMs: 200, description: `a ring of ${members} served` }
  )
}

/** Resolves once every replica's work queues were empty at two polls in a row. */
export async function queuesIdle(engines: readonly EngineProcess[]): Promise<void> {
  let emptyPolls = 0
  await waitFor(
    async () => {
      const depths = await Promise.all(engines.map((e) => metric(e, 'workqueue_depth')))
      emptyPolls = depths.every((d) => d === 0) ? emptyPolls + 1 : 0
      return emptyPolls >= 2 ? true : undefined
    },
    { timeoutMs: 1_800_000, intervalMs: 1000, description: 'every work queue empty' }
  )
}

/** Seconds with one decimal. */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`
}
