import { readFile } from 'node:fs/promises'
import { setFlagsFromString } from 'node:v8'
import type { Command } from 'commander'
import { Option } from 'commander'
import { DEFAULT_SSA_FIELD_MANAGER } from '../../engine/children/child-applier.js'
import { Engine } from '../../engine/engine.js'
import { DEFAULT_HOOK_MAX_IN_FLIGHT } from '../../engine/hooks/hook-call-limiter.js'
import {
  startEngineLeaderElection,
  startRivalDetection,
} from '../../engine/leader/engine-leader-election.js'
import type { EngineLeaderElection } from '../../engine/leader/engine-leader-election.js'
import { startOpsServer } from './ops-server.js'
import { startEngineSharding } from '../../engine/sharding/engine-sharding.js'
import type { EngineSharding } from '../../engine/sharding/engine-sharding.js'
import { ShardMetrics } from '../../engine/sharding/shard-metrics.js'
import type { ClusterConfig } from '../../kube/cluster-config.js'
import { loadClusterConfig, SERVICE_ACCOUNT_DIR } from '../../kube/load-cluster-config.js'
import { EventLoopWatchdog } from '../../runtime/diagnostics/event-loop-watchdog.js'
import { createLogger } from '../../runtime/diagnostics/logger.js'
import { RuntimeMetrics } from '../../runtime/metrics/runtime-metrics.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import { CliError } from '../cli-error.js'
import { proxyEnvironmentFrom } from '../../kube/proxy/proxy-resolver.js'
import { GoFlagCommand } from '../go-flags.js'
import {
  LEADER_ELECTION_FLAG_DEFAULTS,
  parseGoBool,
  parseRunFlags,
  USAGE_EXIT_CODE,
  withDevelopmentDefaults,
} from './run-flags.js'
import type { RunConfig, RunOptions } from './run-flags.js'
import { withShardingFlags } from './run-sharding-flags.js'
import { watchShutdown } from './shutdown-signals.js'
import type { Shutdown } from './shutdown-signals.js'

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

/** Without leader election: warn about other engines, when a namespace for the Lease is known. */
async function startRivals(
  config: RunConfig,
  cluster: ClusterConfig,
  log: Logger
): Promise<{ stop(): Promise<void> } | undefined> {
  if (config.leaderElection.enabled || config.sharding.enabled) return undefined
  const namespace = await leaseNamespace(config).catch(() => undefined)
  if (namespace === undefined) return undefined
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
  return startEngineLeaderElection(cluster, {
    namespace: await leaseNamespace(config),
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
  return startEngineSharding(cluster, {
    namespace: await leaseNamespace(config),
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
        config.leaderElection.namespace === ''
          ? await leaseNamespace(config)
          : config.leaderElection.namespace,
      name: config.leaderElection.id,
    },
    log,
  })
}

/**
 * Where requests go, for the start line: the proxies in effect (credentials left out) and the
 * `--hook-address` redirects; both are easy to forget and the first question when a call fails.
 */
function routingFields(
  config: RunConfig,
  proxyUrl: string | undefined
): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = proxyFields(proxyUrl)
  if (config.hookAddresses.size > 0) {
    fields['hookAddresses'] = [...config.hookAddresses].map(
      ([from, to]) => `${from}=${to.host}:${to.port}`
    )
  }
  return fields
}

/** The proxy settings in effect, credentials left out; none: no fields. */
function proxyFields(proxyUrl: string | undefined): Record<string, string> {
  const env = proxyEnvironmentFrom(process.env)
  const bare = (value: string): string => {
    try {
      const url = new URL(value)
      return `${url.protocol}//${url.host}`
    } catch {
      return value
    }
  }
  const fields: Record<string, string> = {}
  if (proxyUrl !== undefined) fields['apiProxy'] = bare(proxyUrl)
  if (env.httpsProxy !== '') fields['httpsProxy'] = bare(env.httpsProxy)
  if (env.httpProxy !== '') fields['httpProxy'] = bare(env.httpProxy)
  if (env.noProxy !== '' && Object.keys(fields).length > 0) fields['noProxy'] = env.noProxy
  return fields
}

/** One line for a failed start; the stack goes to the debug log only. */
function startFailure(error: unknown, log: Logger): CliError {
  log.debug('start-up failed', { error, stack: error instanceof Error ? error.stack : undefined })
  return new CliError(`cannot start: ${error instanceof Error ? error.message : String(error)}`)
}

/** Serves /metrics and the probes; pushes each server to `servers` so the caller closes it. */
async function startOpsServers(
  config: RunConfig,
  engine: Engine,
  started: () => boolean,
  servers: { close(): Promise<void> }[],
  log: Logger
): Promise<void> {
  const watchdog =
    config.eventLoopStallMs === undefined || config.probeAddress === undefined
      ? undefined
      : new EventLoopWatchdog({ thresholdMs: config.eventLoopStallMs })
  if (watchdog !== undefined) {
    watchdog.start()
    // Stopped with the servers: its timer would keep the process alive.
    servers.push({
      close: () => {
        watchdog.stop()
        return Promise.resolve()
      },
    })
  }
  const sources = {
    notReady: (): string[] => (started() ? engine.notReady() : ['engine starting']),
    readyNotes: (): string[] => (started() ? engine.forbiddenNotReady() : []),
    notHealthy: (): string[] => [...engine.unhealthy(), ...(watchdog?.unhealthy() ?? [])],
  }
  for (const [what, address] of [
    ['metrics', config.metricsAddress],
    ['health probes', config.probeAddress],
  ] as const) {
    if (address === undefined) continue
    let server
    try {
      server = await startOpsServer(address, {
        ...sources,
        ...(what === 'metrics' ? { metrics: () => engine.metrics.render() } : {}),
      })
    } catch (error) {
      throw new CliError(
        `cannot serve ${what} on ${address.host}:${address.port}: ` +
          (error instanceof Error ? error.message : String(error))
      )
    }
    servers.push(server)
    log.info(`serving ${what}`, { address: `${address.host}:${server.port}` })
  }
  if (config.pprofAddress !== undefined) {
    // The profiler's native module costs memory that only a --pprof-address run should pay.
    const { startPprofServer } = await import('../pprof-server.js')
    const server = await startPprofServer(config.pprofAddress)
    servers.push(server)
    log.info('serving profiles', { address: `${config.pprofAddress.host}:${server.port}` })
  }
}

async function serve(config: RunConfig, shutdown: Shutdown, log: Logger): Promise<void> {
  const cluster = await loadClusterConfig({
    ...(config.kubeconfig === undefined ? {} : { kubeconfig: config.kubeconfig }),
    ...(config.context === undefined ? {} : { context: config.context }),
  })
  const metrics = new RuntimeMetrics()
  metrics.collectProcessMetrics()
  const election = await startElection(config, cluster, metrics, log)
  const ring = await startSharding(config, cluster, metrics, log)
  const engine = new Engine(cluster, {
    metrics,
    ...(election === undefined ? {} : { leadership: election.leadership }),
    ...(ring === undefined
      ? {}
      : { leadership: ring.leadership, shard: ring.shard, replicaIdentity: ring.identity }),
    workers: config.workers,
    discoveryIntervalMs: config.discoveryIntervalMs,
    cacheFlushIntervalMs: config.cacheFlushIntervalMs,
    clientRateLimit: config.clientRateLimit,
    targetLabelSelector: config.targetLabelSelector,
    revisionNamespace: config.revisionNamespace,
    applyStrategy: config.applyStrategy,
    ssaFieldManager: config.ssaFieldManager,
    hookResponseLimitBytes: config.hookResponseLimitBytes,
    hookMaxInFlight: config.hookMaxInFlight,
    hookAddresses: config.hookAddresses,
    eventsQps: config.eventsQps,
    eventsBurst: config.eventsBurst,
    log,
  })
  log.info('starting metactl run', {
    server: cluster.server,
    source: cluster.source,
    workers: config.workers,
    applyStrategy: config.applyStrategy,
    leaderElection: election === undefined ? false : election.identity,
    sharding: ring === undefined ? false : { identity: ring.identity, key: config.sharding.field },
    ...routingFields(config, cluster.proxyUrl),
  })
  const rivals = await startRivals(config, cluster, log)
  const servers: { close(): Promise<void> }[] = []
  let started = false
  let failure: CliError | undefined
  try {
    await startOpsServers(config, engine, () => started, servers, log)
    try {
      await engine.start(shutdown.signal)
      started = true
      letYoungGenerationGrow()
      log.info('serving controllers', { count: engine.runningControllers().length })
    } catch (error) {
      if (!shutdown.signal.aborted) throw startFailure(error, log)
    }
    const lost =
      election?.lost.then((reason) => `leader election lost: ${reason}`) ??
      ring?.lost.then((reason) => `ring membership lost: ${reason}`) ??
      new Promise<string>(() => undefined)
    const outcome = await Promise.race([shutdown.done, lost.then((reason) => ({ lost: reason }))])
    if (typeof outcome === 'object') failure = new CliError(outcome.lost)
    log.info('shutting down', {
      reason: typeof outcome === 'object' ? outcome.lost : outcome,
    })
  } finally {
    // A ring member drains and leaves first, so the others take its parents while it stops.
    await ring?.release()
    // The Lease goes as soon as the last write is done, so the successor starts at once.
    await engine.stop(() => election?.release() ?? Promise.resolve())
    await rivals?.stop()
    await Promise.all(servers.map((s) => s.close()))
    log.info('stopped')
  }
  if (failure !== undefined) throw failure
}

/**
 * Keeps WebAssembly on V8's baseline compiler. undici parses HTTP with llhttp compiled to
 * WebAssembly, and the optimising tier recompiles it at the first connection: measured, a 35 MiB
 * start-up peak and 10 MiB kept for good, for a parser that only frames headers and chunks (bodies
 * pass through). It must run before the first connection compiles the module.
 */
function keepWasmOnBaselineCompiler(): void {
  setFlagsFromString('--liftoff-only')
}

/**
 * Restores V8's default growth of the young generation (factor 2), which `bin/metactl.js` holds
 * at 1 while `run` loads and starts: measured, 4 MiB less resident memory for an idle engine, and
 * under load the young generation grows as it always did.
 */
function letYoungGenerationGrow(): void {
  setFlagsFromString('--semi-space-growth-factor=2')
}

async function run(opts: RunOptions): Promise<void> {
  // Every flag is checked before the first file is read or connection made.
  const config = parseRunFlags(opts)
  keepWasmOnBaselineCompiler()
  const log = createLogger({
    level: config.logLevel,
    format: config.logFormat,
    time: config.logTime,
    stacktraceLevel: config.stacktraceLevel,
  })
  const shutdown = watchShutdown(log)
  try {
    await serve(config, shutdown, log)
  } finally {
    shutdown.dispose()
  }
}

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
      '--healthz-max-event-loop-delay <duration>',
      'an event-loop stall longer than this fails /healthz for 30 s (0 disables)',
      '10s'
    )
    .action(async (opts: RunOptions, command: Command) => {
      await run(withDevelopmentDefaults(opts, (key) => command.getOptionValueSource(key) === 'cli'))
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
