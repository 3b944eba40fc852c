import { Command, Option } from 'commander'
import { parseGoDuration } from '../../core/go-duration.js'
import type { ApplyStrategy } from '../../engine/children/child-applier.js'
import {
  DEFAULT_SSA_FIELD_MANAGER,
  parseApplyStrategy,
} from '../../engine/children/child-applier.js'
import { Engine } from '../../engine/engine.js'
import { parseListenAddress, startOpsServer } from '../../engine/ops/ops-server.js'
import { createLogger } from '../../runtime/logger.js'
import type { LogFormat, LogLevel } from '../../runtime/logger.js'
import { CliError } from '../cli-error.js'
import type { CliIo } from '../cli-io.js'

interface RunOptions {
  kubeconfig?: string
  context?: string
  workers: string
  discoveryInterval: string
  cacheFlushInterval: string
  clientGoQps: string
  clientGoBurst: string
  targetLabelSelector: string
  metricsAddress: string
  healthProbeBindAddress: string
  zapLogLevel: string
  zapEncoder: string
  applyStrategy: string
  applyStrategySsaFieldManager: string
}

function applyStrategy(text: string): ApplyStrategy {
  try {
    return parseApplyStrategy(text)
  } catch (error) {
    // Upstream fails startup on an unknown strategy; say so plainly, without a stack trace.
    throw new CliError(
      `--apply-strategy: ${error instanceof Error ? error.message : String(error)}`
    )
  }
}

function duration(flag: string, text: string): number {
  const ms = parseGoDuration(text)
  if (ms === undefined || ms <= 0)
    throw new CliError(`--${flag} must be a duration such as 30s or 5m, got "${text}"`)
  return ms
}

function positiveNumber(flag: string, text: string, integer: boolean): number {
  const value = Number(text)
  if (!Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) {
    throw new CliError(
      `--${flag} must be a ${integer ? 'non-negative integer' : 'non-negative number'}, got "${text}"`
    )
  }
  return value
}

function logLevel(text: string): LogLevel {
  // Upstream takes zap levels or an integer verbosity N (V(N)); 4 and above mean debug detail.
  if (/^\d+$/.test(text)) return Number(text) >= 4 ? 'debug' : 'info'
  if (text === 'debug' || text === 'info' || text === 'warn' || text === 'error') return text
  throw new CliError(`--zap-log-level must be debug, info, warn, error or a number, got "${text}"`)
}

function logFormat(text: string): LogFormat {
  if (text === 'json') return 'json'
  if (text === 'console' || text === 'text') return 'text'
  throw new CliError(`--zap-encoder must be json or console, got "${text}"`)
}

async function run(io: CliIo, opts: RunOptions): Promise<void> {
  const log = createLogger({
    level: logLevel(opts.zapLogLevel),
    format: logFormat(opts.zapEncoder),
  })
  const strategy = applyStrategy(opts.applyStrategy)
  if (opts.applyStrategySsaFieldManager === '')
    throw new CliError('--apply-strategy-ssa-field-manager must not be empty')
  const metricsAddress = parseListenAddress(opts.metricsAddress)
  const probeAddress = parseListenAddress(opts.healthProbeBindAddress)
  const engine = await Engine.connect({
    ...(opts.kubeconfig === undefined ? {} : { kubeconfig: opts.kubeconfig }),
    ...(opts.context === undefined ? {} : { context: opts.context }),
    workers: positiveNumber('workers', opts.workers, true),
    discoveryIntervalMs: duration('discovery-interval', opts.discoveryInterval),
    cacheFlushIntervalMs: duration('cache-flush-interval', opts.cacheFlushInterval),
    clientRateLimit: {
      qps: positiveNumber('client-go-qps', opts.clientGoQps, false),
      burst: Math.max(1, positiveNumber('client-go-burst', opts.clientGoBurst, true)),
    },
    targetLabelSelector: opts.targetLabelSelector,
    applyStrategy: strategy,
    ssaFieldManager: opts.applyStrategySsaFieldManager,
    log,
  })
  log.info('starting metactl run', {
    server: engine.transport.config.server,
    source: engine.transport.config.source,
    workers: opts.workers,
    discoveryInterval: opts.discoveryInterval,
    cacheFlushInterval: opts.cacheFlushInterval,
    clientGoQps: opts.clientGoQps,
    clientGoBurst: opts.clientGoBurst,
    targetLabelSelector: opts.targetLabelSelector,
    applyStrategy: strategy,
    ...(strategy === 'server-side-apply'
      ? { ssaFieldManager: opts.applyStrategySsaFieldManager }
      : {}),
  })
  const servers: { close(): Promise<void> }[] = []
  let ready = false
  const notReady = (): string[] => {
    if (!ready) return ['engine starting']
    return engine.context.informers
      .status()
      .filter((s) => !s.synced)
      .map((s) => `${s.description} not synced`)
  }
  if (metricsAddress !== undefined) {
    const server = await startOpsServer(metricsAddress, {
      metrics: () => engine.metrics.render(),
      notReady,
    })
    servers.push(server)
    log.info('serving metrics', { address: `${metricsAddress.host}:${server.port}` })
  }
  if (probeAddress !== undefined) {
    const server = await startOpsServer(probeAddress, { notReady })
    servers.push(server)
    log.info('serving health probes', { address: `${probeAddress.host}:${server.port}` })
  }
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => {
      resolve('SIGTERM')
    })
    process.once('SIGINT', () => {
      resolve('SIGINT')
    })
  })
  // A signal during startup (an API server that never answers, a watch that never syncs) must
  // still end the process: race the start against it.
  const first = await Promise.race([engine.start().then(() => 'started' as const), stopped])
  if (first === 'started') {
    ready = true
    io.err(
      `metactl run: serving ${engine.runningControllers().length} controller(s); stop with Ctrl-C`
    )
  }
  const signal = first === 'started' ? await stopped : first
  log.info('shutting down', { signal })
  await engine.stop()
  await Promise.all(servers.map((s) => s.close()))
  log.info('stopped')
}

/** Builds `metactl run`, with upstream Metacontroller's flag names and defaults. */
export function runCommand(io: CliIo): Command {
  return new Command('run')
    .description(
      'run the engine: serve every CompositeController in the cluster, like upstream Metacontroller'
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
      '--apply-strategy <strategy>',
      'how children are written: dynamic-apply (client-side 3-way merge) or server-side-apply',
      'dynamic-apply'
    )
    .option(
      '--apply-strategy-ssa-field-manager <name>',
      'the field manager of server-side apply',
      DEFAULT_SSA_FIELD_MANAGER
    )
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
      '--zap-log-level <level>',
      'log level: debug, info, warn, error, or a verbosity number',
      'info'
    )
    .option('--zap-encoder <format>', 'log format: json or console', 'json')
    .action(async (opts: RunOptions) => {
      await run(io, opts)
    })
}
