/**
 * The sharding flags of `metactl run` (an extension: upstream Metacontroller has one leader and
 * idle standbys). With `--sharding` every replica serves the parents whose hash it owns on a
 * consistent-hash ring of the live replicas.
 *
 * @module
 */
import type { Command } from 'commander'
import { Option } from 'commander'
import { parseGoDuration } from '../../core/go-duration.js'
import { LEADER_ELECTION_DEFAULTS } from '../../runtime/leader/leader-election-defaults.js'
import type { ShardField } from '../../runtime/ring/shard-selector.js'
import { CliError } from '../cli-error.js'

/** The raw sharding option values commander hands over; absent ones take their defaults. */
export interface ShardingOptions {
  sharding?: boolean
  shardingNamespace?: string
  shardingRing?: string
  shardingIdentity?: string
  shardKey?: string
  shardingLeaseDuration?: string
  shardingRenewDeadline?: string
  shardingRetryPeriod?: string
  shardingServerSide?: boolean
}

/** Checked sharding settings. */
export interface ShardingFlags {
  readonly enabled: boolean
  /** Namespace of the member Leases; empty: the leader-election namespace, then the Pod's. */
  readonly namespace: string
  readonly ring: string
  /** This replica's identity in the ring; undefined: `hostname_uuid`. */
  readonly identity: string | undefined
  readonly field: ShardField
  readonly leaseDurationMs: number
  readonly renewDeadlineMs: number
  readonly retryPeriodMs: number
  /** Ask the API server for this replica's parents only (`shardSelector`). */
  readonly serverSide: boolean
}

const DEFAULTS = {
  ring: 'metacontroller',
  shardKey: 'uid',
  leaseDuration: `${LEADER_ELECTION_DEFAULTS.leaseDurationMs / 1000}s`,
  renewDeadline: `${LEADER_ELECTION_DEFAULTS.renewDeadlineMs / 1000}s`,
  retryPeriod: `${LEADER_ELECTION_DEFAULTS.retryPeriodMs / 1000}s`,
} as const

function usage(message: string): CliError {
  return new CliError(message, 2)
}

function duration(flag: string, text: string): number {
  const ms = parseGoDuration(text)
  if (ms === undefined || ms <= 0)
    throw usage(`--${flag} must be a duration such as 15s, got "${text}"`)
  return ms
}

/**
 * Checks the sharding flags; does no I/O.
 *
 * @throws CliError (exit code 2) for an invalid value, or `--sharding` with `--leader-election`.
 */
export function parseShardingFlags(opts: ShardingOptions, leaderElection: boolean): ShardingFlags {
  const enabled = opts.sharding ?? false
  if (enabled && leaderElection)
    throw usage(
      '--sharding and --leader-election exclude each other: a ring already makes every parent ' +
        'have one writer; pick one (see docs/deploy.md to move between them)'
    )
  const field = opts.shardKey ?? DEFAULTS.shardKey
  if (field !== 'uid' && field !== 'namespace')
    throw usage(`--shard-key must be uid or namespace, got "${field}"`)
  const ring = opts.shardingRing ?? DEFAULTS.ring
  // The ring's name is a label value and a Lease name prefix.
  if (!/^[a-z0-9]([-a-z0-9]{0,44}[a-z0-9])?$/.test(ring))
    throw usage(
      `--sharding-ring must be a lower-case DNS label of at most 46 characters, got "${ring}"`
    )
  const flags: ShardingFlags = {
    enabled,
    namespace: opts.shardingNamespace ?? '',
    ring,
    identity:
      opts.shardingIdentity === undefined || opts.shardingIdentity === ''
        ? undefined
        : opts.shardingIdentity,
    field,
    serverSide: opts.shardingServerSide ?? true,
    leaseDurationMs: duration(
      'sharding-lease-duration',
      opts.shardingLeaseDuration ?? DEFAULTS.leaseDuration
    ),
    renewDeadlineMs: duration(
      'sharding-renew-deadline',
      opts.shardingRenewDeadline ?? DEFAULTS.renewDeadline
    ),
    retryPeriodMs: duration(
      'sharding-retry-period',
      opts.shardingRetryPeriod ?? DEFAULTS.retryPeriod
    ),
  }
  if (!(
    flags.leaseDurationMs > flags.renewDeadlineMs && flags.renewDeadlineMs > flags.retryPeriodMs
  ))
    throw usage(
      'sharding needs --sharding-lease-duration > --sharding-renew-deadline > --sharding-retry-period'
    )
  return flags
}

/** Adds the sharding flags (extensions; see docs/compat.md). */
export function withShardingFlags(
  command: Command,
  goBool: (flags: string, description: string) => Option
): Command {
  return command
    .addOption(
      goBool(
        '--sharding',
        'extension: spread parents over every replica on a consistent-hash ring of Leases (instead of --leader-election)'
      )
    )
    .option(
      '--sharding-namespace <ns>',
      'extension: namespace of the ring Leases (default: --leader-election-namespace, in-cluster the Pod namespace)',
      ''
    )
    .option(
      '--sharding-ring <name>',
      'extension: name of the ring (Lease label and name prefix)',
      DEFAULTS.ring
    )
    .option(
      '--sharding-identity <name>',
      'extension: the name of this replica in the ring and in its API user agent (default: hostname_uuid)'
    )
    .addOption(
      new Option(
        '--shard-key <field>',
        'extension: what a parent is hashed by: uid (even spread) or namespace (a namespace on one replica)'
      )
        .choices(['uid', 'namespace'])
        .default(DEFAULTS.shardKey)
    )
    .option(
      '--sharding-lease-duration <duration>',
      'extension: how long a silent replica keeps its parents before the others take them',
      DEFAULTS.leaseDuration
    )
    .option(
      '--sharding-renew-deadline <duration>',
      'extension: how long a replica retries renewing its Lease before it stops writing and exits',
      DEFAULTS.renewDeadline
    )
    .option(
      '--sharding-retry-period <duration>',
      'extension: interval between Lease renewals and ring checks',
      DEFAULTS.retryPeriod
    )
    .addOption(
      goBool(
        '--sharding-server-side',
        "extension: list and watch only this replica's parents (the API server's ShardedListAndWatch shardSelector; filtered here where it is ignored); false: cache every parent"
      ).default(true)
    )
}
