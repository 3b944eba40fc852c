import type { RequestLimiter } from '../../kube/kube-transport.js'
import { systemClock } from '../clock/clock.js'
import type { Clock } from '../clock/clock.js'
import { TokenBucket } from './token-bucket.js'

/** Client-side API rate limit: average requests per second and burst. */
export interface ClientRateLimit {
  /** Average requests per second; `Infinity` (or 0, meaning "off", as a flag) disables limiting. */
  readonly qps: number
  readonly burst: number
}

/**
 * Default client-side limit: 1000 requests/s, burst 2000.
 *
 * @remarks
 * Upstream Metacontroller defaults to client-go's 5 qps / burst 10, which makes a cold start with a
 * few thousand children wait minutes before the first sync finishes. The API server protects
 * itself with priority and fairness and tells us to slow down with 429 + Retry-After (which the
 * transport honours), so the client limit only needs to stop runaway loops; at 100 qps it was the
 * bottleneck of the 1,000-parent benchmark (docs/performance.md).
 */
export const DEFAULT_CLIENT_RATE_LIMIT: ClientRateLimit = { qps: 1000, burst: 2000 }

/**
 * Adapts a token bucket to the transport's {@link RequestLimiter}, reporting the time waited, or
 * returns `undefined` when the limit is off.
 */
export function tokenBucketLimiter(
  limit: ClientRateLimit,
  clock: Clock = systemClock
): RequestLimiter | undefined {
  if (limit.qps === 0 || limit.qps === Infinity) return undefined
  const bucket = new TokenBucket({ qps: limit.qps, burst: limit.burst, clock })
  return {
    take: async (signal) => {
      const started = clock.now()
      await bucket.take(signal)
      return clock.now() - started
    },
  }
}
