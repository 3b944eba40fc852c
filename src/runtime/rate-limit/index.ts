/**
 * Backoff and token buckets that pace retries and client requests.
 *
 * @module
 */
export * from './backoff.js'
export * from './token-bucket-limiter.js'
export * from './token-bucket.js'
