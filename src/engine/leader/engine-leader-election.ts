/**
 * Leader election for the engine: a {@link LeaderElector} on its own connection, turned into the
 * {@link EngineLeadership} an engine takes (a gate for the workers and a write guard).
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { ClusterConfig } from '../../kube/cluster-config.js'
import { Informer } from '../../runtime/informers/informer.js'
import { dynamicListWatcher } from '../../runtime/informers/list-watcher.js'
import { DynamicClient } from '../../kube/dynamic-client.js'
import { KubeTransport } from '../../kube/kube-transport.js'
import { LEASE_RESOURCE, LeaderElector, leaseRecord } from '../../runtime/leader/leader-election.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import type { RuntimeMetrics } from '../../runtime/metrics/runtime-metrics.js'
import { startLeaseHolder } from '../leadership/engine-leadership.js'
import type { EngineLeaseHolder } from '../leadership/engine-leadership.js'

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
export type EngineLeaderElection = EngineLeaseHolder

/** Starts campaigning for the Lease, on a connection of its own (see `startLeaseHolder`); returns at once. */
export function startEngineLeaderElection(
  config: ClusterConfig,
  options: EngineLeaderElectionOptions
): EngineLeaderElection {
  const { log, metrics, name } = options
  let canWrite = false
  const connection = {
    userAgent: 'metacontroller-ts/leader-election',
    retryPeriodMs: options.retryPeriodMs,
    what: 'leader election',
  }
  return startLeaseHolder(config, connection, ({ client, lead, leading }) => {
    metrics?.leadershipCandidate(name)
    const elector = new LeaderElector({
      client,
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
    const informer = watchLeaseRelease(client, options.namespace, name, () => {
      elector.nudge()
    })
    return {
      identity: elector.identity,
      leadership: { leading, canWrite: () => canWrite },
      run: (signal: AbortSignal) =>
        elector.run(signal).catch((error: unknown) => {
          canWrite = false
          throw error
        }),
      letGo: async () => {
        await informer.stop()
        canWrite = false
        await elector.release()
      },
    }
  })
}

/**
 * Watches one Lease and calls `onFree` when it is released or deleted, so a standby takes it at
 * once instead of at its next retry (up to 2.2 retry periods later). Returns the informer to stop.
 */
function watchLeaseRelease(
  client: DynamicClient,
  namespace: string,
  name: string,
  onFree: () => void
): Informer {
  const informer = new Informer(
    dynamicListWatcher(client, LEASE_RESOURCE, {
      namespace,
      fieldSelector: `metadata.name=${name}`,
    })
  )
  const check = (lease: KubeObject | undefined): void => {
    if (lease === undefined || leaseRecord(lease).holderIdentity === '') onFree()
  }
  informer.subscribe({
    onUpdate: (_old, lease) => {
      check(lease)
    },
    onDelete: () => {
      check(undefined)
    },
  })
  informer.start()
  return informer
}

/** Options of {@link startRivalDetection}. */
export interface RivalDetectionOptions {
  readonly namespace: string
  /** The leader-election Lease name (`--leader-election-id`). */
  readonly name: string
  readonly log: Logger
  /** How often the leader-election Lease is read (10 s). */
  readonly intervalMs?: number
}

/**
 * For an engine running without leader election: warns when another engine is detected, either
 * one without leader election (both announce themselves on the Lease `<name>-without-leader-election`)
 * or one with it (it renews the Lease `<name>`). This engine never takes the Lease `<name>`, so
 * it cannot keep replicas that do use leader election from electing a leader.
 */
export function startRivalDetection(
  config: ClusterConfig,
  options: RivalDetectionOptions
): { stop(): Promise<void> } {
  const transport = new KubeTransport(config, {
    userAgent: 'metacontroller-ts/rival-detection',
    timeoutMs: 5000,
  })
  const client = new DynamicClient(transport)
  const { log, namespace, name } = options
  const warned = new Set<string>()
  const warn = (holder: string, how: string): void => {
    if (warned.has(holder)) return
    warned.add(holder)
    log.warn(
      `another engine is running against this cluster (${how}); both write every parent: ` +
        'run every replica with --leader-election',
      { lease: `${namespace}/${name}`, other: holder }
    )
  }
  const announcer = new LeaderElector({
    client,
    namespace,
    name: `${name}-without-leader-election`,
    // Its own log lines would read like leader election; only the warning matters here.
    onNewLeader: (holder) => {
      if (holder !== announcer.identity) warn(holder, 'also without leader election')
    },
  })
  const stop = new AbortController()
  const announcing = announcer.run(stop.signal).catch((error: unknown) => {
    log.debug('cannot announce this engine on a Lease', { error })
  })
  const timer = setInterval(() => {
    client.get(LEASE_RESOURCE, name, { namespace }).then(
      (lease) => {
        const record = leaseRecord(lease)
        const renewed = Date.parse(record.renewTime ?? '')
        const fresh = Date.now() - renewed < 2 * record.leaseDurationSeconds * 1000
        if (record.holderIdentity !== '' && fresh) warn(record.holderIdentity, 'it leads the Lease')
      },
      () => undefined
    )
  }, options.intervalMs ?? 10_000)
  timer.unref()
  return {
    stop: async () => {
      clearInterval(timer)
      stop.abort()
      await announcing
      await announcer.release()
      await transport.close()
    },
  }
}
