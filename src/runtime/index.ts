/**
 * The generic controller runtime: informers, shared informers, the work queue and the
 * controller loop. Nothing here knows about Metacontroller.
 *
 * @module
 */
export { Informer, stripManagedFields } from './informer.js'
export type { InformerHandlers, InformerOptions } from './informer.js'
export { dynamicListWatcher } from './list-watcher.js'
export type { ListWatcher, ListWatchScope } from './list-watcher.js'
export { SharedInformers } from './shared-informers.js'
export { WorkQueue } from './work-queue.js'
export { ControllerLoop, Action, outcomeOf } from './controller-loop.js'
export type { Reconcile, ReconcileContext, Outcome } from './controller-loop.js'
export { NotSyncedError, RetryAfterError, TerminalError } from './reconcile-errors.js'
export { RuntimeMetrics } from './runtime-metrics.js'
export { createLogger } from './logger.js'
export type { Logger, LogLevel, LogFormat } from './logger.js'
export { fnv1a64, shardHash } from './sharding/fnv1a64.js'
export { HashRing } from './sharding/hash-ring.js'
export type { HashRange } from './sharding/hash-ring.js'
export { shardSelector } from './sharding/shard-selector.js'
export type { ShardField } from './sharding/shard-selector.js'
