/**
 * The prom-client classes the engine uses (`Registry`, `Counter`, `Gauge`, `Histogram`), loaded
 * from the package's library files instead of its index.
 *
 * @remarks
 * prom-client's index also loads the Pushgateway (an HTTP client), the cluster aggregator and
 * the default process metrics: measured, 10 MiB of resident memory against 0.5 MiB for these
 * four. They are the very modules the index loads, so a `Registry` made through the index (as a
 * test may) is the same class. The types still come from the package's declarations.
 *
 * @module
 */
import { createRequire } from 'node:module'
import type * as Prom from 'prom-client'

const load = createRequire(import.meta.url)

/** prom-client's metric registry (the class its index exports). */
export const Registry = load('prom-client/lib/registry.js') as typeof Prom.Registry
/** An instance of {@link Registry}. */
export type Registry = Prom.Registry

/** prom-client's counter (the class its index exports). */
export const Counter = load('prom-client/lib/counter.js') as typeof Prom.Counter
/** An instance of {@link Counter}. */
export type Counter<T extends string = string> = Prom.Counter<T>

/** prom-client's gauge (the class its index exports). */
export const Gauge = load('prom-client/lib/gauge.js') as typeof Prom.Gauge
/** An instance of {@link Gauge}. */
export type Gauge<T extends string = string> = Prom.Gauge<T>

/** prom-client's histogram (the class its index exports). */
export const Histogram = load('prom-client/lib/histogram.js') as typeof Prom.Histogram
/** An instance of {@link Histogram}. */
export type Histogram<T extends string = string> = Prom.Histogram<T>

// prom-client's default metrics but its CPU counters, in its order; processResources only where
// Node has getActiveResourcesInfo, as prom-client decides.
const DEFAULT_METRIC_FILES: readonly string[] = [
  'processStartTime',
  'osMemoryHeap',
  'processOpenFileDescriptors',
  'processMaxFileDescriptors',
  'eventLoopLag',
  ...(typeof process.getActiveResourcesInfo === 'function' ? ['processResources'] : []),
  'processHandles',
  'processRequests',
  'heapSizeAndUsed',
  'heapSpacesSizeAndUsed',
  'version',
  'gc',
]

type MetricFactory = (registry: Registry, config: { eventLoopMonitoringPrecision: number }) => void

/**
 * The three process CPU counters of prom-client's `processCpuTotal`, with its names, help and
 * arithmetic. prom-client's own file loads the OpenTelemetry API for exemplars the engine does not
 * enable: measured, 0.5 MiB of resident memory for nothing.
 */
function collectCpuCounters(registry: Registry): void {
  const registers = [registry]
  let last = process.cpuUsage()
  const system = new Counter({
    name: 'process_cpu_system_seconds_total',
    help: 'Total system CPU time spent in seconds.',
    registers: [],
  })
  const total = new Counter({
    name: 'process_cpu_seconds_total',
    help: 'Total user and system CPU time spent in seconds.',
    registers: [],
  })
  const user = new Counter({
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    registers,
    // One collect sets all three, as prom-client does.
    collect() {
      const now = process.cpuUsage()
      const userMicros = now.user - last.user
      const systemMicros = now.system - last.system
      last = now
      user.inc(userMicros / 1e6)
      system.inc(systemMicros / 1e6)
      total.inc((userMicros + systemMicros) / 1e6)
    },
  })
  registry.registerMetric(system)
  registry.registerMetric(total)
}

/**
 * prom-client's process and Node.js metrics (`process_*`, `nodejs_*`), loaded on first use: only
 * `metactl run` exposes them, and their collectors are part of the memory the index costs. The
 * same series as prom-client's `collectDefaultMetrics`, from its metric files.
 */
export function collectDefaultMetrics(config: { readonly register: Registry }): void {
  collectCpuCounters(config.register)
  for (const file of DEFAULT_METRIC_FILES) {
    const collect = load(`prom-client/lib/metrics/${file}.js`) as MetricFactory
    collect(config.register, { eventLoopMonitoringPrecision: 10 })
  }
}
