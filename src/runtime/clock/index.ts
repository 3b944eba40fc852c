/**
 * Time for the runtime: the injectable clock, a fake one for tests, abortable sleeps and polling waits.
 *
 * @module
 */
export * from './abortable-sleep.js'
export * from './clock.js'
export * from './fake-clock.js'
export * from './wait-for.js'
