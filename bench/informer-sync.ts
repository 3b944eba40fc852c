// Initial list: seconds until an informer over N existing ConfigMaps is synced, and the peak RSS
// of the process that synced it, with a streaming initial list (KEP-3157 WatchList) and with a
// paged list (500 a page) then a watch. Each sync runs in a fresh Node process of its own (the
// peak RSS of a process cannot be reset), the modes alternating; the cache drops managedFields,
// as the engine's does.
//
//   node --import tsx bench/informer-sync.ts [count=10000] [mode=both|stream|list] [runs=3]
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { DynamicClient } from '../src/kube/dynamic-client.js'
import { KubeTransport } from '../src/kube/kube-transport.js'
import { loadClusterConfig } from '../src/kube/load-cluster-config.js'
import { Informer, stripManagedFields } from '../src/runtime/informers/informer.js'
import { dynamicListWatcher } from '../src/runtime/informers/list-watcher.js'
import { startControlPlane } from '../src/testing/index.js'
import { CONFIGMAPS, createNamespace, runBounded } from './bench-cluster.js'

type Mode = 'stream' | 'list'

/** What one child process measured. */
interface SyncRun {
  readonly mode: Mode
  readonly objects: number
  readonly seconds: number
  /** RSS before the informer started (Node, the modules, one transport). */
  readonly startRssMiB: number
  readonly peakRssMiB: number
  /** RSS once synced, after a full GC. */
  readonly syncedRssMiB: number
  readonly requests: string
}

const MIB = 1024 * 1024

/** The child: one informer over `ns`, synced once; prints a {@link SyncRun} as JSON. */
async function measureOne(kubeconfig: string, ns: string, mode: Mode): Promise<void> {
  const transport = new KubeTransport(await loadClusterConfig({ kubeconfig }))
  const client = new DynamicClient(transport)
  const calls: string[] = []
  const inner = dynamicListWatcher(client, CONFIGMAPS, { namespace: ns })
  const source = {
    ...inner,
    listPage: (options: Parameters<typeof inner.listPage>[0]) => {
      calls.push('list')
      return inner.listPage(options)
    },
    watchList: (options: Parameters<NonNullable<typeof inner.watchList>>[0]) => {
      calls.push('watchList')
      return inner.watchList?.(options) ?? Promise.reject(new Error('no streaming lists'))
    },
  }
  globalThis.gc?.()
  const startRssMiB = process.memoryUsage.rss() / MIB
  const informer = new Informer(source, {
    transform: stripManagedFields,
    watchList: mode === 'stream',
  })
  const started = performance.now()
  informer.start()
  await informer.waitForSync()
  const seconds = (performance.now() - started) / 1000
  // maxRSS is in KiB.
  const peakRssMiB = process.resourceUsage().maxRSS / 1024
  globalThis.gc?.()
  const syncedRssMiB = process.memoryUsage.rss() / MIB
  const counts = new Map<string, number>()
  for (const call of calls) counts.set(call, (counts.get(call) ?? 0) + 1)
  const run: SyncRun = {
    mode,
    objects: informer.store.size,
    seconds,
    startRssMiB,
    peakRssMiB,
    syncedRssMiB,
    requests: [...counts].map(([call, n]) => `${n} ${call}`).join(', '),
  }
  console.log(JSON.stringify(run))
  await informer.stop()
  await transport.close()
}

/** Runs {@link measureOne} in a fresh process and returns what it printed. */
function spawnRun(kubeconfig: string, ns: string, mode: Mode): Promise<SyncRun> {
  const args = ['--expose-gc', '--import', 'tsx', import.meta.filename]
  const child = spawn(process.execPath, [...args, '--child', kubeconfig, ns, mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  return new Promise((resolve, reject) => {
    child.on('close', (code) => {
      const line = out.trim().split('\n').at(-1) ?? ''
      if (code === 0) resolve(JSON.parse(line) as SyncRun)
      else reject(new Error(`run ${mode} exited ${String(code)}: ${out}`))
    })
  })
}

function row(run: SyncRun): string {
  const mib = (n: number): string => n.toFixed(0)
  return (
    `informer-sync: ${run.mode.padEnd(6)} ${run.objects} objects in ${run.seconds.toFixed(2)} s; ` +
    `RSS start ${mib(run.startRssMiB)} MiB, peak ${mib(run.peakRssMiB)} MiB, synced ${mib(run.syncedRssMiB)} MiB (${run.requests})`
  )
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 10_000)
  const which = process.argv[3] ?? 'both'
  const runs = Number(process.argv[4] ?? 3)
  const modes: Mode[] = which === 'both' ? ['stream', 'list'] : [which as Mode]
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
    const createdSeconds = (performance.now() - created) / 1000
    console.log(`informer-sync: created ${count} ConfigMaps in ${createdSeconds.toFixed(1)} s`)
    console.log(`informer-sync: load average ${readFileSync('/proc/loadavg', 'utf8').trim()}`)
    for (let run = 1; run <= runs; run++) {
      // Alternating, so a change in the machine's load falls on both modes alike.
      for (const mode of run % 2 === 1 ? modes : [...modes].reverse()) {
        console.log(row(await spawnRun(plane.kubeconfigPath, ns, mode)))
      }
    }
  } finally {
    await transport.close()
    await plane.stop()
  }
}

if (process.argv[2] === '--child') {
  await measureOne(process.argv[3] ?? '', process.argv[4] ?? '', process.argv[5] as Mode)
} else {
  await main()
}
