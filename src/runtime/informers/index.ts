/**
 * Informers: list+watch into an object store with label indexes, shared per resource.
 *
 * @module
 */
export * from './informer.js'
export * from './list-watcher.js'
export * from './object-store.js'
export * from './shared-informers.js'
