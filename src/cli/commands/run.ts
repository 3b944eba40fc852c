/**
 * `metactl run`: upstream Metacontroller's flags, names and defaults; the engine itself runs in
 * `runEngine`.
 *
 * @module
 */
import type { Command } from 'commander'
import { Option } from 'commander'
import { DEFAULT_SSA_FIELD_MANAGER } from '../../engine/children/child-applier.js'
import { DEFAULT_HOOK_MAX_IN_FLIGHT } from '../../engine/hooks/hook-call-limiter.js'
import { GoFlagCommand } from '../go-flags.js'
import { LEADER_ELECTION_FLAG_DEFAULTS, parseGoBool, withDevelopmentDefaults } from './run-flags.js'
import type { RunOptions } from './run-flags.js'
import { runEngine } from './run-engine.js'
import { withShardingFlags } from './run-sharding-flags.js'

/** Builds `metactl run`, with upstream Metacontroller's flag names and defaults. */
export function runCommand(): Command {
  const command = new GoFlagCommand('run')
    .description(
      'run the engine: serve every CompositeController and DecoratorController in the cluster, like upstream Metacontroller'
    )
    .option(
      '--kubeconfig <path>',
      'kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)'
    )
    .option('--context <name>', 'kubeconfig context (default: current-context)')
    .option('--workers <n>', 'workers per hosted controller', '5')
    .option('--discovery-interval <duration>', 'how often API discovery is refreshed', '30s')
    .option('--cache-flush-interval <duration>', 'how often every parent is resynced', '30m')
    .addOption(
      new Option(
        '--client-go-qps <qps>',
        'client-side API rate limit in requests/s (0 disables)'
      ).default('1000', '1000; upstream: 5')
    )
    .addOption(
      new Option('--client-go-burst <n>', 'client-side API burst').default(
        '2000',
        '2000; upstream: 10'
      )
    )
    .option(
      '--target-label-selector <selector>',
      'only serve controllers whose labels match, e.g. team=a',
      ''
    )
    .option(
      '--revision-namespace <namespace>',
      "where cluster-scoped parents' ControllerRevisions live (default: $POD_NAMESPACE, else default)"
    )
    .option(
      '--apply-strategy <strategy>',
      'how children are written: dynamic-apply (client-side 3-way merge) or server-side-apply',
      'dynamic-apply'
    )
    .option(
      '--apply-strategy-ssa-field-manager <name>',
      'the field manager of server-side apply',
      DEFAULT_SSA_FIELD_MANAGER
    )
    .addOption(
      new Option(
        '--hook-response-size-limit <size>',
        'largest hook response body accepted, e.g. 64Mi; a larger one fails the sync'
      ).default('64Mi')
    )
    .option(
      '--hook-max-in-flight <n>',
      'concurrent hook calls per controller (sync, finalize and customize together); more wait their turn',
      String(DEFAULT_HOOK_MAX_IN_FLIGHT)
    )
    .option(
      '--hook-address <host:port=address:port>',
      'connect hook URLs for host:port to address:port instead, e.g. a Service name to a local hook (TLS still checks host); repeatable',
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value]
    )
    .option(
      '--feature-gates <gates>',
      'client-side feature gates, client-go names: WatchListClient=false lists and watches instead of streaming initial lists (also KUBE_FEATURE_WatchListClient)'
    )
    .option(
      '--healthz-max-event-loop-delay <duration>',
      'an event-loop stall longer than this fails /healthz for 30 s (0 disables)',
      '10s'
    )
    .action(async (opts: RunOptions, command: Command) => {
      await runEngine(
        withDevelopmentDefaults(opts, (key) => command.getOptionValueSource(key) === 'cli')
      )
    })
  return withShardingFlags(
    withLeaderElectionFlags(withLoggingFlags(withObservabilityFlags(command))),
    goBoolOption
  )
}

/** Adds the metrics, probe, logging, event and profile flags. */
function withObservabilityFlags(command: Command): Command {
  return command
    .option(
      '--metrics-address <addr>',
      'serve /metrics on host:port (0 disables)',
      '127.0.0.1:9999'
    )
    .option(
      '--health-probe-bind-address <addr>',
      'serve /healthz and /readyz on host:port (0 disables)',
      '127.0.0.1:8081'
    )
    .option(
      '--events-qps <qps>',
      'per-object event refill rate in events/s (a number or a fraction)',
      '1/300'
    )
    .option('--events-burst <n>', 'per-object event burst', '25')
    .option(
      '--pprof-address <addr>',
      'serve /debug/pprof/heap and /debug/pprof/profile on host:port (0 disables)',
      '0'
    )
}

/** Adds upstream's zap logging flags (controller-runtime's names). */
function withLoggingFlags(command: Command): Command {
  return command
    .option(
      '--zap-log-level <level>',
      'log level: debug, info, warn, error, or a verbosity N (4: API writes, 5: merge diffs, 6: hook bodies, 7: discovery)',
      'info'
    )
    .option('--zap-encoder <format>', 'log format: json or console', 'json')
    .option(
      '--zap-time-encoding <encoding>',
      'log time format: epoch (seconds), millis, nano, iso8601, rfc3339 or rfc3339nano',
      'epoch'
    )
    .option(
      '--zap-stacktrace-level <level>',
      'lines at or above this level carry a stacktrace: info, error or panic (--zap-devel: warn)',
      'error'
    )
    .addOption(
      goBoolOption(
        '--zap-devel',
        'development mode: console encoder and debug level, unless --zap-encoder or --zap-log-level say otherwise'
      )
    )
}

/**
 * A boolean flag as Go's flag package reads it: `--name` alone, or `--name=true|false`, which
 * upstream's docs and manifests use (`--leader-election=false`).
 */
function goBoolOption(flags: string, description: string): Option {
  const name = flags.slice(2)
  return new Option(`${flags} [bool]`, description)
    .argParser((text: string) => parseGoBool(name, text))
    .preset('true')
    .default(false)
}

/** Adds upstream's leader-election flags (client-go's defaults). */
function withLeaderElectionFlags(command: Command): Command {
  return command
    .addOption(
      goBoolOption('--leader-election', 'elect a leader among replicas on a Lease; only it writes')
    )
    .option('--leader-election-resource-lock <lock>', 'lock kind (only leases)', 'leases')
    .option(
      '--leader-election-namespace <ns>',
      "namespace of the Lease (default in-cluster: the Pod's namespace)",
      ''
    )
    .option('--leader-election-id <name>', 'name of the Lease', 'metacontroller')
    .option(
      '--leader-election-lease-duration <duration>',
      'how long a standby waits before taking an unrenewed lease',
      LEADER_ELECTION_FLAG_DEFAULTS.leaseDuration
    )
    .option(
      '--leader-election-renew-deadline <duration>',
      'how long the leader retries renewing before it stops writing and exits',
      LEADER_ELECTION_FLAG_DEFAULTS.renewDeadline
    )
    .option(
      '--leader-election-retry-period <duration>',
      'interval between attempts to acquire or renew the lease',
      LEADER_ELECTION_FLAG_DEFAULTS.retryPeriod
    )
}
