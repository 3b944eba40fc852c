// The fastest any engine could converge the side-by-side's workload on this machine: the writes
// that convergence needs and nothing else, with no watch, no hook call and no engine process.
// The benchmark creates N BenchParents at 16 in flight (as bench/upstream-side-by-side.ts does);
// as each create returns, a pool of W writers creates the parent's two ConfigMap children and
// writes its status, each as one request. The time from the first parent create to the last
// status write is a floor for any engine's converge time in the side-by-side: a real engine also
// waits for watch events, calls its hook and competes for the same two cores. Also printed: the
// API server's and etcd's CPU meanwhile, which an engine's run cannot go below either.
//
//   node --import tsx bench/convergence-floor.ts [parents=10000] [writers=16] [rounds=1]
//
// Each round runs on a fresh `--nodes 0` plane (startBenchPlane, as the side-by-side).
import { loadavg } from 'node:os'
import type { KubeObject } from '../src/core/kube-object.js'
import { DynamicClient } from '../src/kube/dynamic-client.js'
import { KubeTransport } from '../src/kube/kube-transport.js'
import { CONFIGMAPS, createNamespace, runBounded } from './bench-cluster.js'
import { benchParent, desired, PARENTS, startBenchPlane } from './bench-parents.js'
import { readPlane } from './huge-plane.js'

const COUNT = Number(process.argv[2] ?? 10000)
const WRITERS = Number(process.argv[3] ?? 16)
const ROUNDS = Number(process.argv[4] ?? 1)

/** What one round measured. */
interface FloorFigures {
  readonly seconds: number
  readonly parentsCreatedS: number
  readonly writes: number
  /** CPU of the API server and etcd meanwhile. */
  readonly planeCpuS: number
}

/** A queue of created parents drained by `writers` concurrent writers until `total` are done. */
function childWriters(
  client: DynamicClient,
  total: number,
  writers: number
): { push(parent: KubeObject): void; done: Promise<void> } {
  const ready: KubeObject[] = []
  const waiting: (() => void)[] = []
  let taken = 0
  const next = async (): Promise<KubeObject | undefined> => {
    if (taken >= total) return undefined
    taken++
    while (ready.length === 0) await new Promise<void>((wake) => waiting.push(wake))
    return ready.shift()
  }
  const writer = async (): Promise<void> => {
    for (let parent = await next(); parent !== undefined; parent = await next()) {
      const { children, status } = desired(parent)
      const ns = parent.metadata.namespace ?? ''
      await Promise.all(
        children.map((child) =>
          client.create(CONFIGMAPS, { ...child, metadata: { ...child.metadata, namespace: ns } })
        )
      )
      const synced = { ...status, observedGeneration: parent.metadata.generation }
      await client.updateStatus(PARENTS, { ...parent, status: synced })
    }
  }
  const done = Promise.all(Array.from({ length: writers }, writer)).then(() => undefined)
  return {
    push(parent) {
      ready.push(parent)
      waiting.shift()?.()
    },
    done,
  }
}

/** One round on a fresh plane. */
async function runRound(): Promise<FloorFigures> {
  const plane = await startBenchPlane()
  const transport = new KubeTransport(plane.config)
  const client = new DynamicClient(transport)
  try {
    const ns = await createNamespace(client, `bench-floor-${Date.now()}`)
    const sink = childWriters(client, COUNT, WRITERS)
    const before = readPlane(plane)
    const started = performance.now()
    await runBounded(COUNT, 16, async (i) => {
      sink.push(await client.create(PARENTS, benchParent(`p-${i}`, ns, i)))
    })
    const parentsCreatedS = (performance.now() - started) / 1000
    await sink.done
    const seconds = (performance.now() - started) / 1000
    const after = readPlane(plane)
    const planeCpuMs =
      after.apiServerCpuMs + after.etcdCpuMs - before.apiServerCpuMs - before.etcdCpuMs
    return { seconds, parentsCreatedS, writes: 4 * COUNT, planeCpuS: planeCpuMs / 1000 }
  } finally {
    await transport.close()
    await plane.stop()
  }
}

for (let round = 1; round <= ROUNDS; round++) {
  const figures = await runRound()
  console.log(
    `convergence-floor round ${round}: ${COUNT} parents, ${WRITERS} writers: ` +
      `${figures.seconds.toFixed(2)} s for ${figures.writes} writes ` +
      `(${(figures.writes / figures.seconds).toFixed(0)} writes/s; parents created at ` +
      `${figures.parentsCreatedS.toFixed(2)} s), API server and etcd CPU ` +
      `${figures.planeCpuS.toFixed(1)} s, load ${loadavg()[0]?.toFixed(1) ?? '?'}`
  )
}
