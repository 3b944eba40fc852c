/**
 * Lease-based leader election.
 *
 * @module
 */
export * from './leader-election.js'
