/**
 * Leader election for the engine: a {@link LeaderElector} on its own connection, turned into the
 * {@link EngineLeadership} an engine takes (a gate for the workers and a write guard).
 *
 * @module
 */
import type { ClusterConfig } from '../../kube/cluster-config.js'
import { DynamicClient } from '../../kube/dynamic-client.js'
import { KubeTransport } from '../../kube/kube-transport.js'
import { LeaderElector } from '../../runtime/leader-election.js'
import type { Logger } from '../../runtime/logger.js'
import type { RuntimeMetrics } from '../../runtime/runtime-metrics.js'
import type { EngineLeadership } from '../engine.js'

/** Options of {@link startEngineLeaderElection}. */
export interface EngineLeaderElectionOptions {
  readonly namespace: string
  readonly name: string
  readonly leaseDurationMs: number
  readonly renewDeadlineMs: number
  readonly retryPeriodMs: number
  readonly identity?: string
  readonly log: Logger
  readonly metrics?: RuntimeMetrics
}

/** A running election. */
export interface EngineLeaderElection {
  /** Pass to the engine. */
  readonly leadership: EngineLeadership
  /** This candidate's identity in the Lease. */
  readonly identity: string
  /** Resolves with the reason once leadership is lost (not on {@link release}). */
  readonly lost: Promise<string>
  /** Stops campaigning and, when leading, gives the Lease up for an immediate successor. */
  release(): Promise<void>
}

/**
 * Starts campaigning for the Lease; returns at once.
 *
 * @remarks
 * The Lease is read and written over a connection of its own, outside the engine's client-side
 * rate limit and write guard, so a busy engine cannot starve its own renewals.
 */
export function startEngineLeaderElection(
  config: ClusterConfig,
  options: EngineLeaderElectionOptions
): EngineLeaderElection {
  const transport = new KubeTransport(config, {
    userAgent: 'metacontroller-ts/leader-election',
    // A renewal must settle well within the renew deadline to count.
    timeoutMs: Math.max(1000, options.retryPeriodMs * 2),
  })
  const { log, metrics, name } = options
  let canWrite = false
  let lead: () => void = () => undefined
  const leading = new Promise<void>((resolve) => {
    lead = resolve
  })
  let reportLost: (reason: string) => void = () => undefined
  const lost = new Promise<string>((resolve) => {
    reportLost = resolve
  })
  metrics?.leadershipCandidate(name)
  const elector = new LeaderElector({
    client: new DynamicClient(transport),
    namespace: options.namespace,
    name,
    ...(options.identity === undefined ? {} : { identity: options.identity }),
    leaseDurationMs: options.leaseDurationMs,
    renewDeadlineMs: options.renewDeadlineMs,
    retryPeriodMs: options.retryPeriodMs,
    log,
    onStartedLeading: () => {
      canWrite = true
      metrics?.leadership(name, true)
      lead()
    },
    onStoppedLeading: () => {
      // First of all: from here on, every write of this process is refused.
      canWrite = false
      metrics?.leadership(name, false)
    },
  })
  const stop = new AbortController()
  const running = elector.run(stop.signal).then(
    (reason) => {
      if (reason !== 'stopped') reportLost(reason)
    },
    (error: unknown) => {
      canWrite = false
      reportLost(
        `leader election failed: ${error instanceof Error ? error.message : String(error)}`
      )
    }
  )
  return {
    leadership: { leading, canWrite: () => canWrite },
    identity: elector.identity,
    lost,
    release: async () => {
      stop.abort()
      await running
      canWrite = false
      await elector.release()
      await transport.close()
    },
  }
}
