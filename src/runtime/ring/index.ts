/**
 * Sharding by consistent hashing: the hash, the ring, membership leases, ownership and shard selectors.
 *
 * @module
 */
export * from './fnv1a64.js'
export * from './hash-ring.js'
export * from './member-lease.js'
export * from './member-table.js'
export * from './ring-membership.js'
export * from './ring-ownership.js'
export * from './shard-selector.js'
