// What each module of `metactl run` costs at start-up: the compiled modules (`npm run build`)
// imported one after another, in the order `node bin/metactl.js run` loads them, each in a fresh
// `node --expose-gc` process that imports the steps before it too; after a full collection it
// prints RSS, heap used and heap committed. A row's cost is the difference to the row above.
// Rows marked `(flag)` are loaded only when their feature is switched on; the total of the
// default path excludes them.
//
//   npm run build && node --import tsx bench/startup-modules.ts [runs=3]
//
// Each process is fresh, so a row includes everything imported above it; the median of `runs`
// is printed. RSS depends on the machine's Node build; heap figures are stable to ~0.05 MiB.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const RUNS = Number(process.argv[2] ?? 3)

/** One step: a label and what it imports (a dist path or a package specifier). */
interface Step {
  readonly label: string
  readonly specifiers: readonly string[]
  /** Loaded only when a flag switches its feature on. */
  readonly optional?: boolean
}

const dist = (path: string): string => pathToFileURL(resolve(ROOT, 'dist', path)).href

// Bottom-up: each step's own modules, with what they share with the steps above already loaded.
const STEPS: readonly Step[] = [
  { label: 'node (nothing imported)', specifiers: [] },
  { label: 'commander', specifiers: ['commander'] },
  { label: 'cli/main (CLI shell, error lines)', specifiers: [dist('cli/main.js')] },
  { label: 'undici (Agent, request, connector)', specifiers: [dist('kube/undici-core.js')] },
  {
    label: 'prom-client (Registry and metric types)',
    specifiers: [dist('runtime/metrics/prom-client-core.js')],
  },
  {
    label: 'kube client (kubeconfig, transport, discovery)',
    specifiers: [dist('kube/load-cluster-config.js'), dist('kube/discovery.js')],
  },
  {
    label: 'runtime (metrics, informers, queue, logger)',
    specifiers: [
      dist('runtime/metrics/runtime-metrics.js'),
      dist('runtime/informers/shared-informers.js'),
      dist('runtime/queue/controller-loop.js'),
      dist('runtime/diagnostics/logger.js'),
    ],
  },
  {
    label: 'engine (sync pipeline, hooks, rollout, customize)',
    specifiers: [dist('engine/engine.js')],
  },
  {
    label: 'run command (flags, ops servers, watchdog)',
    specifiers: [dist('cli/commands/run.js')],
  },
  { label: 'yaml (a kubeconfig file in YAML)', specifiers: ['yaml'] },
  {
    label: 'leader election or rival detection (flag, or in a cluster)',
    specifiers: [dist('engine/leader/engine-leader-election.js')],
    optional: true,
  },
  {
    label: 'sharding (flag)',
    specifiers: [
      dist('engine/sharding/engine-sharding.js'),
      dist('engine/sharding/shard-metrics.js'),
    ],
    optional: true,
  },
  {
    label: 'server-side apply (flag)',
    specifiers: [dist('engine/children/server-side-applier.js')],
    optional: true,
  },
  { label: '@datadog/pprof (flag)', specifiers: [dist('cli/pprof-server.js')], optional: true },
]

const MIB = 1024 * 1024

/** Imports `specifiers` in a fresh process and returns its memory after a full collection. */
function measure(specifiers: readonly string[]): { rss: number; used: number; total: number } {
  const script = `
    for (const s of ${JSON.stringify(specifiers)}) await import(s)
    await new Promise((r) => setTimeout(r, 200))
    globalThis.gc(); globalThis.gc()
    const m = process.memoryUsage()
    process.stdout.write(JSON.stringify({ rss: m.rss, used: m.heapUsed, total: m.heapTotal }))
    process.exit(0)`
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', '--liftoff-only', '--input-type=module', '-e', script],
    { cwd: ROOT, encoding: 'utf8' }
  )
  return JSON.parse(out) as { rss: number; used: number; total: number }
}

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN

if (!existsSync(resolve(ROOT, 'dist/cli/main.js'))) throw new Error('run `npm run build` first')
console.log(`node ${process.version}, ${RUNS} runs, median; cost = difference to the row above`)
console.log('| step | RSS MiB | cost | heap used MiB | cost | heap committed MiB |')
console.log('|---|---|---|---|---|---|')
let previous = { rss: 0, used: 0 }
const imported: string[] = []
for (const step of STEPS) {
  const specifiers = [...imported, ...step.specifiers]
  const samples = Array.from({ length: RUNS }, () => measure(specifiers))
  const row = {
    rss: median(samples.map((s) => s.rss)) / MIB,
    used: median(samples.map((s) => s.used)) / MIB,
    total: median(samples.map((s) => s.total)) / MIB,
  }
  console.log(
    `| ${step.label} | ${row.rss.toFixed(1)} | ${(row.rss - previous.rss).toFixed(1)} | ` +
      `${row.used.toFixed(2)} | ${(row.used - previous.used).toFixed(2)} | ${row.total.toFixed(1)} |`
  )
  // Optional steps are measured on top of the default path but do not stay imported.
  if (step.optional !== true) {
    imported.push(...step.specifiers)
    previous = row
  }
}
