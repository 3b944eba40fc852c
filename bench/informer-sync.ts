// Initial list+watch: seconds until an informer over N existing objects is synced.
//
//   node --import tsx bench/informer-sync.ts [count=10000]
import { DynamicClient } from '../src/kube/dynamic-client.js'
import { KubeTransport } from '../src/kube/kube-transport.js'
import { Informer } from '../src/runtime/informers/informer.js'
import { dynamicListWatcher } from '../src/runtime/informers/list-watcher.js'
import { startControlPlane } from '../src/testing/index.js'
import { CONFIGMAPS, createNamespace, runBounded } from './bench-cluster.js'

const count = Number(process.argv[2] ?? 10_000)
const plane = await startControlPlane({
  useExistingCluster: process.env['METACTL_USE_EXISTING_CLUSTER'] === '1',
  // No Pods here: the smaller plane keeps the figures in docs/performance.md comparable.
  nodes: 0,
})
const transport = new KubeTransport(plane.config)
const client = new DynamicClient(transport)
try {
  const ns = await createNamespace(client, `bench-sync-${Date.now()}`)
  const created = performance.now()
  await runBounded(count, 16, (i) =>
    client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${i}`, namespace: ns, labels: { bench: 'sync' } },
      data: { index: String(i) },
    })
  )
  console.log(
    `informer-sync: created ${count} ConfigMaps in ${((performance.now() - created) / 1000).toFixed(1)} s`
  )
  for (const run of [1, 2, 3]) {
    const informer = new Informer(dynamicListWatcher(client, CONFIGMAPS, { namespace: ns }))
    const started = performance.now()
    informer.start()
    await informer.waitForSync()
    const seconds = (performance.now() - started) / 1000
    console.log(
      `informer-sync: run ${run}: ${informer.store.size} objects synced in ${seconds.toFixed(2)} s`
    )
    await informer.stop()
  }
} finally {
  await transport.close()
  await plane.stop()
}
