// Raw write ceiling: creating N ConfigMaps with C requests in flight through our client.
// Later benchmarks compare the engine's write rate with this ceiling.
//
//   node --import tsx bench/write-throughput.ts [count=2000] [concurrency=16]
import { DynamicClient } from '../src/kube/dynamic-client.js'
import { KubeTransport } from '../src/kube/kube-transport.js'
import { startControlPlane } from '../src/testing/index.js'
import type { ControlPlane } from '../src/testing/index.js'
import { CONFIGMAPS, createNamespace, runBounded } from './bench-cluster.js'

/** Result of {@link measureWriteCeiling}. */
export interface WriteCeiling {
  readonly count: number
  readonly concurrency: number
  readonly seconds: number
  readonly objectsPerSecond: number
  readonly connections: number
}

/** Creates `count` ConfigMaps in a fresh namespace with `concurrency` in flight and times it. */
export async function measureWriteCeiling(
  plane: ControlPlane,
  count: number,
  concurrency: number
): Promise<WriteCeiling> {
  const transport = new KubeTransport(plane.config)
  const client = new DynamicClient(transport)
  try {
    const ns = await createNamespace(client, `bench-write-${Date.now()}`)
    const started = performance.now()
    await runBounded(count, concurrency, (i) =>
      client.create(CONFIGMAPS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${i}`, namespace: ns },
        data: { index: String(i), payload: 'x'.repeat(256) },
      })
    )
    const seconds = (performance.now() - started) / 1000
    return {
      count,
      concurrency,
      seconds,
      objectsPerSecond: count / seconds,
      connections: transport.connectionsOpened,
    }
  } finally {
    await transport.close()
  }
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const count = Number(process.argv[2] ?? 2000)
  const concurrency = Number(process.argv[3] ?? 16)
  const plane = await startControlPlane({
    useExistingCluster: process.env['METACTL_USE_EXISTING_CLUSTER'] === '1',
    // No Pods here: the smaller plane keeps the figures in docs/performance.md comparable.
    nodes: 0,
  })
  try {
    const result = await measureWriteCeiling(plane, count, concurrency)
    console.log(
      `write-throughput: ${result.count} ConfigMaps, ${result.concurrency} in flight: ` +
        `${result.seconds.toFixed(2)} s, ${result.objectsPerSecond.toFixed(0)} objects/s, ` +
        `${result.connections} connections`
    )
  } finally {
    await plane.stop()
  }
}
