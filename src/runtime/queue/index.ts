/**
 * The work queue, its metrics and stall watch, and the controller loop that drains it.
 *
 * @module
 */
export * from './controller-loop.js'
export * from './queue-stall-watch.js'
export * from './reconcile-errors.js'
export * from './work-queue-metrics.js'
export * from './work-queue.js'
