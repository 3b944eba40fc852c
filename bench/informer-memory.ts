// Informer memory: heap and RSS growth per 1,000 cached Pods of realistic size.
//
//   node --expose-gc --import tsx bench/informer-memory.ts [pods=5000] [raw|strip] [index]
//
// With `index`, two label keys are then indexed (as a selector's query does, see
// ObjectStore.listMatching) and the index's own growth is measured the same way.
import { DynamicClient } from '../src/kube/dynamic-client.js'
import { KubeTransport } from '../src/kube/kube-transport.js'
import { Informer, stripManagedFields } from '../src/runtime/informers/informer.js'
import { dynamicListWatcher } from '../src/runtime/informers/list-watcher.js'
import { startControlPlane } from '../src/testing/index.js'
import { PODS, createNamespace, mib, realisticPod, runBounded } from './bench-cluster.js'

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error('run with node --expose-gc')
const settle = async (): Promise<NodeJS.MemoryUsage> => {
  for (let i = 0; i < 3; i++) {
    gc()
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return process.memoryUsage()
}

const count = Number(process.argv[2] ?? 5000)
const mode = process.argv[3] ?? 'raw'
const plane = await startControlPlane({
  useExistingCluster: process.env['METACTL_USE_EXISTING_CLUSTER'] === '1',
  // No Pods here: the smaller plane keeps the figures in docs/performance.md comparable.
  nodes: 0,
})
const transport = new KubeTransport(plane.config)
const client = new DynamicClient(transport)
try {
  const ns = await createNamespace(client, `bench-mem-${Date.now()}`)
  await runBounded(count, 16, (i) => client.create(PODS, realisticPod(`web-${i}`, ns)))
  const sample = await client.get(PODS, 'web-0', { namespace: ns })
  const jsonBytes = Buffer.byteLength(JSON.stringify(sample))

  const stripped = Buffer.byteLength(JSON.stringify(stripManagedFields(sample)))
  console.log(
    `informer-memory: ${count} Pods, ${jsonBytes} bytes of JSON each (${stripped} without managedFields)`
  )
  // One variant per process: a freed cache does not give its pages back promptly enough for a
  // second measurement in the same heap to be trusted.
  const runs =
    mode === 'strip'
      ? ([['managedFields stripped', { transform: stripManagedFields }]] as const)
      : ([['as sent', {}]] as const)
  for (const [label, options] of runs) {
    const before = await settle()
    const informer = new Informer(dynamicListWatcher(client, PODS, { namespace: ns }), options)
    informer.start()
    await informer.waitForSync()
    const after = await settle()
    const size = informer.store.size
    const per1000 = (bytes: number): string => mib((bytes / size) * 1000)
    console.log(
      `informer-memory (${label}): heapUsed +${mib(after.heapUsed - before.heapUsed)} MiB ` +
        `(${per1000(after.heapUsed - before.heapUsed)} MiB per 1,000 Pods); ` +
        `RSS +${mib(after.rss - before.rss)} MiB (${per1000(after.rss - before.rss)} MiB per 1,000 Pods)`
    )
    if (process.argv[4] === 'index') {
      for (const key of ['app', 'tier']) {
        informer.store.listMatching({ labels: [{ key, values: ['none'] }] })
      }
      const indexed = await settle()
      console.log(
        `informer-memory (label index, 2 keys on every Pod): heapUsed ` +
          `+${mib(indexed.heapUsed - after.heapUsed)} MiB ` +
          `(${per1000(indexed.heapUsed - after.heapUsed)} MiB per 1,000 Pods)`
      )
    }
    // Stopped and dropped before the next run measures its own baseline.
    await informer.stop()
  }
} finally {
  await transport.close()
  await plane.stop()
}
