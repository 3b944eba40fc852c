/**
 * `metactl run`'s own servers: /metrics, the health probes (with the event-loop watchdog) and,
 * only with `--pprof-address`, the profiles, whose native module is loaded then and only then.
 *
 * @module
 */
import type { Engine } from '../../engine/engine.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import { EventLoopWatchdog } from '../../runtime/diagnostics/event-loop-watchdog.js'
import { messageOf } from '../../core/message-of.js'
import { CliError } from '../cli-error.js'
import { startOpsServer } from './ops-server.js'
import type { RunConfig } from './run-flags.js'

/**
 * Serves /metrics and the probes, and the profiles with `--pprof-address`; pushes each server to
 * `servers` so the caller closes it.
 *
 * @throws CliError when an address cannot be served.
 */
export async function startOpsServers(
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
        `cannot serve ${what} on ${address.host}:${address.port}: ` + messageOf(error)
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
