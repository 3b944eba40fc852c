/**
 * The runtime's logger and the event-loop watchdog.
 *
 * @module
 */
export * from './event-loop-watchdog.js'
export * from './logger.js'
