/**
 * The body of `metactl run`: from the parsed flags to a running engine, and its orderly stop.
 *
 * @module
 */
import { setFlagsFromString } from 'node:v8'
import { Engine } from '../../engine/engine.js'
import { loadClusterConfig } from '../../kube/load-cluster-config.js'
import { proxyEnvironmentFrom } from '../../kube/proxy/proxy-resolver.js'
import { createLogger } from '../../runtime/diagnostics/logger.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import { RuntimeMetrics } from '../../runtime/metrics/runtime-metrics.js'
import { messageOf } from '../../core/message-of.js'
import { CliError } from '../cli-error.js'
import { parseRunFlags } from './run-flags.js'
import type { RunConfig, RunOptions } from './run-flags.js'
import { watchShutdown } from './shutdown-signals.js'
import type { Shutdown } from './shutdown-signals.js'
import { startLeaseHolders, startRivals } from './start-lease-holders.js'
import { startOpsServers } from './start-ops-servers.js'

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
  return new CliError(`cannot start: ${messageOf(error)}`)
}

async function serve(config: RunConfig, shutdown: Shutdown, log: Logger): Promise<void> {
  const cluster = await loadClusterConfig({
    ...(config.kubeconfig === undefined ? {} : { kubeconfig: config.kubeconfig }),
    ...(config.context === undefined ? {} : { context: config.context }),
  })
  const metrics = new RuntimeMetrics()
  metrics.collectProcessMetrics()
  const { election, ring } = await startLeaseHolders(config, cluster, metrics, log)
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
    watchList: config.watchList,
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
 * Runs the engine as `metactl run` does until a shutdown signal or a lost Lease: checks every
 * flag, sets V8 up, starts the Lease holders, the engine and its servers, and stops them in order.
 *
 * @throws CliError on a bad flag, a failed start or a lost Lease.
 */
export async function runEngine(opts: RunOptions): Promise<void> {
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
