/**
 * Runtime metrics (client, queue, informer) on a trimmed prom-client core.
 *
 * @module
 */
export * from './prom-client-core.js'
export * from './runtime-metrics.js'
