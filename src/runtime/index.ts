/**
 * The generic controller runtime: informers, shared informers, the work queue and the
 * controller loop. Nothing here knows about Metacontroller.
 *
 * @module
 */
export { Informer, stripManagedFields } from './informers/informer.js'
export type { InformerHandlers, InformerOptions } from './informers/informer.js'
export { dynamicListWatcher } from './informers/list-watcher.js'
export type { ListWatcher, ListWatchScope } from './informers/list-watcher.js'
export { SharedInformers } from './informers/shared-informers.js'
export { WorkQueue } from './queue/work-queue.js'
export { ControllerLoop, Action, outcomeOf } from './queue/controller-loop.js'
export type { Reconcile, ReconcileContext, Outcome } from './queue/controller-loop.js'
export { NotSyncedError, RetryAfterError, TerminalError } from './queue/reconcile-errors.js'
export { RuntimeMetrics } from './metrics/runtime-metrics.js'
export { createLogger } from './diagnostics/logger.js'
export type { Logger, LogLevel, LogFormat } from './diagnostics/logger.js'
export { fnv1a64, shardHash } from './ring/fnv1a64.js'
export { HashRing } from './ring/hash-ring.js'
export type { HashRange } from './ring/hash-ring.js'
export { shardSelector } from './ring/shard-selector.js'
export type { ShardField } from './ring/shard-selector.js'
