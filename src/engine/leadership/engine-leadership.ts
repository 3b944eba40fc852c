/**
 * How an engine learns whether its replica may work and write, and the one way a replica holds
 * Leases for it: on a connection of its own, with a `lost` promise and a release. Leader
 * election (`engine/leader`) and ring membership (`engine/sharding`) are both built on it.
 *
 * @module
 */
import { messageOf } from '../../core/message-of.js'
import type { ClusterConfig } from '../../kube/cluster-config.js'
import { DynamicClient } from '../../kube/dynamic-client.js'
import { KubeTransport } from '../../kube/kube-transport.js'

/** How an engine learns whether its replica leads; see `EngineOptions.leadership`. */
export interface EngineLeadership {
  /** Settles when this replica starts leading. */
  readonly leading: Promise<void>
  /** Whether this replica may write now. */
  canWrite(): boolean
}

/** A running Lease holder (an election or a ring membership), as the engine's caller sees it. */
export interface EngineLeaseHolder {
  /** Pass to the engine as `leadership`. */
  readonly leadership: EngineLeadership
  /** This replica's identity in its Lease. */
  readonly identity: string
  /** Resolves with the reason once the Lease is lost (not on {@link release}). */
  readonly lost: Promise<string>
  /** Stops holding and gives the Lease up, so another replica takes over at once. */
  release(): Promise<void>
}

/** What {@link startLeaseHolder} is given on the connection it opened. */
export interface LeaseConnection {
  /** The client on the holder's own connection. */
  readonly client: DynamicClient
  /** Settles {@link LeaseConnection.leading}: call when this replica starts leading or serving. */
  readonly lead: () => void
  /** Settles on the first {@link LeaseConnection.lead}. */
  readonly leading: Promise<void>
}

/** The parts of a Lease holder that differ between an election and a ring. */
export interface LeaseRunner {
  readonly identity: string
  readonly leadership: EngineLeadership
  /** Holds the Lease until `signal` aborts ('stopped') or it is lost (the reason). */
  readonly run: (signal: AbortSignal) => Promise<string>
  /** Lets go once {@link LeaseRunner.run} has settled, before the connection closes. */
  readonly letGo: () => Promise<void>
}

/** Options of {@link startLeaseHolder}. */
export interface LeaseHolderOptions {
  /** The connection's user agent, which the API server's audit log shows. */
  readonly userAgent: string
  /** The holder's retry period: a renewal must settle well within it. */
  readonly retryPeriodMs: number
  /** What failed, in the `lost` reason when {@link LeaseRunner.run} rejects. */
  readonly what: string
}

/**
 * Starts a Lease holder built by `start` on a connection of its own; returns at once. Whatever
 * `start` returns besides the {@link LeaseRunner} members is handed back as is.
 *
 * @remarks
 * The Leases are read and written outside the engine's client-side rate limit and write guard,
 * so a busy engine cannot starve its own renewals.
 */
export function startLeaseHolder<R extends LeaseRunner>(
  config: ClusterConfig,
  options: LeaseHolderOptions,
  start: (connection: LeaseConnection) => R
): Omit<R, 'run' | 'letGo'> & EngineLeaseHolder {
  const transport = new KubeTransport(config, {
    userAgent: options.userAgent,
    // A renewal must settle well within the renew deadline to count.
    timeoutMs: Math.max(1000, options.retryPeriodMs * 2),
  })
  let lead: () => void = () => undefined
  const leading = new Promise<void>((resolve) => {
    lead = resolve
  })
  let reportLost: (reason: string) => void = () => undefined
  const lost = new Promise<string>((resolve) => {
    reportLost = resolve
  })
  const { run, letGo, ...held } = start({ client: new DynamicClient(transport), lead, leading })
  const stop = new AbortController()
  const running = run(stop.signal).then(
    (reason) => {
      if (reason !== 'stopped') reportLost(reason)
    },
    (error: unknown) => {
      reportLost(`${options.what} failed: ${messageOf(error)}`)
    }
  )
  return {
    ...held,
    lost,
    release: async () => {
      stop.abort()
      await running
      await letGo()
      await transport.close()
    },
  }
}
