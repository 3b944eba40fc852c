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

/**
 * prom-client's process and Node.js metrics (`process_*`, `nodejs_*`), loaded on first use: only
 * `metactl run` exposes them, and their collectors are part of the memory the index costs.
 */
export function collectDefaultMetrics(
  config: Prom.DefaultMetricsCollectorConfiguration<'text/plain; version=0.0.4; charset=utf-8'>
): void {
  const collect = load('prom-client/lib/defaultMetrics.js') as typeof Prom.collectDefaultMetrics
  collect(config)
}
