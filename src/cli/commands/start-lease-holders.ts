/**
 * `metactl run`'s Lease holders: leader election (`--leader-election`), ring membership
 * (`--sharding`), or, without either, the detection of rival engines. Each is loaded with a
 * dynamic import when its flag (or, for rivals, a known namespace) asks for it, so an engine that
 * uses none never loads their code.
 *
 * @module
 */
import { readFile } from 'node:fs/promises'
import type { EngineLeaderElection } from '../../engine/leader/engine-leader-election.js'
import type { EngineSharding } from '../../engine/sharding/engine-sharding.js'
import type { ClusterConfig } from '../../kube/cluster-config.js'
import { SERVICE_ACCOUNT_DIR } from '../../kube/load-cluster-config.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import type { RuntimeMetrics } from '../../runtime/metrics/runtime-metrics.js'
import { CliError } from '../cli-error.js'
import { USAGE_EXIT_CODE } from './run-flags.js'
import type { RunConfig } from './run-flags.js'

/** What {@link startLeaseHolders} started; each absent when its feature is off. */
export interface LeaseHolders {
  readonly election: EngineLeaderElection | undefined
  readonly ring: EngineSharding | undefined
}

async function leaseNamespace(config: RunConfig): Promise<string> {
  if (config.sharding.enabled && config.sharding.namespace !== '') return config.sharding.namespace
  if (config.leaderElection.namespace !== '') return config.leaderElection.namespace
  try {
    return (await readFile(`${SERVICE_ACCOUNT_DIR}/namespace`, 'utf8')).trim()
  } catch {
    throw new CliError(
      config.sharding.enabled
        ? '--sharding-namespace is required when running outside a cluster'
        : '--leader-election-namespace is required when running outside a cluster',
      USAGE_EXIT_CODE
    )
  }
}

/**
 * Without leader election and sharding: warns about other engines, when a namespace for the
 * Lease is known (in a cluster, or from the flags); otherwise starts nothing.
 */
export async function startRivals(
  config: RunConfig,
  cluster: ClusterConfig,
  log: Logger
): Promise<{ stop(): Promise<void> } | undefined> {
  if (config.leaderElection.enabled || config.sharding.enabled) return undefined
  const namespace = await leaseNamespace(config).catch(() => undefined)
  if (namespace === undefined) return undefined
  const { startRivalDetection } = await import('../../engine/leader/engine-leader-election.js')
  return startRivalDetection(cluster, { namespace, name: config.leaderElection.id, log })
}

async function startElection(
  config: RunConfig,
  cluster: ClusterConfig,
  engineMetrics: RuntimeMetrics,
  log: Logger
): Promise<EngineLeaderElection | undefined> {
  const flags = config.leaderElection
  if (!flags.enabled) return undefined
  const namespace = await leaseNamespace(config)
  const { startEngineLeaderElection } =
    await import('../../engine/leader/engine-leader-election.js')
  return startEngineLeaderElection(cluster, {
    namespace,
    name: flags.id,
    leaseDurationMs: flags.leaseDurationMs,
    renewDeadlineMs: flags.renewDeadlineMs,
    retryPeriodMs: flags.retryPeriodMs,
    log,
    metrics: engineMetrics,
  })
}

async function startSharding(
  config: RunConfig,
  cluster: ClusterConfig,
  engineMetrics: RuntimeMetrics,
  log: Logger
): Promise<EngineSharding | undefined> {
  const flags = config.sharding
  if (!flags.enabled) return undefined
  const namespace = await leaseNamespace(config)
  const [{ startEngineSharding }, { ShardMetrics }] = await Promise.all([
    import('../../engine/sharding/engine-sharding.js'),
    import('../../engine/sharding/shard-metrics.js'),
  ])
  return startEngineSharding(cluster, {
    namespace,
    ring: flags.ring,
    field: flags.field,
    leaseDurationMs: flags.leaseDurationMs,
    renewDeadlineMs: flags.renewDeadlineMs,
    retryPeriodMs: flags.retryPeriodMs,
    ...(flags.identity === undefined ? {} : { identity: flags.identity }),
    metrics: new ShardMetrics(engineMetrics.registry),
    serverSideWatches: flags.serverSide,
    // Moving from --leader-election to --sharding: the old leader hands over first.
    afterLeaderLease: {
      namespace:
        config.leaderElection.namespace === '' ? namespace : config.leaderElection.namespace,
      name: config.leaderElection.id,
    },
    log,
  })
}

/**
 * Starts the Lease holders the flags ask for: leader election, then ring membership.
 *
 * @throws CliError when a Lease namespace is needed outside a cluster and no flag gives it.
 */
export async function startLeaseHolders(
  config: RunConfig,
  cluster: ClusterConfig,
  metrics: RuntimeMetrics,
  log: Logger
): Promise<LeaseHolders> {
  const election = await startElection(config, cluster, metrics, log)
  const ring = await startSharding(config, cluster, metrics, log)
  return { election, ring }
}
