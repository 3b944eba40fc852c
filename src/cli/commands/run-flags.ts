/**
 * The flags of `metactl run`, checked as a whole before any I/O: a bad flag is one line on stderr
 * and exit code 2, never a stack trace or a half-started engine.
 *
 * @module
 */
import { parseGoDuration } from '../../core/go-duration.js'
import { compileLabelSelector } from '../../core/label-selector.js'
import { parseSelectorString } from '../../core/parse-selector-string.js'
import type { ApplyStrategy } from '../../engine/children/child-applier.js'
import { parseApplyStrategy } from '../../engine/children/child-applier.js'
import { DEFAULT_REVISION_NAMESPACE } from '../../engine/engine-options.js'
import { parseListenAddress } from './ops-server.js'
import { parseHookAddress } from '../../engine/hooks/traced-connector.js'
import type { HookAddressMap } from '../../engine/hooks/traced-connector.js'
import { LEADER_ELECTION_DEFAULTS } from '../../runtime/leader/leader-election-defaults.js'
import type { LogFormat, LogLevel } from '../../runtime/diagnostics/logger.js'
import { CliError } from '../cli-error.js'
import { parseShardingFlags } from './run-sharding-flags.js'
import { parseClientFeatureGates } from './run-feature-gates.js'
import type { ShardingFlags, ShardingOptions } from './run-sharding-flags.js'
import { messageOf } from '../../core/message-of.js'

/** Exit code of a usage error, as most CLIs (and Go's flag package) use. */
export const USAGE_EXIT_CODE = 2

/** The raw option values commander hands over. */
export interface RunOptions extends ShardingOptions {
  kubeconfig?: string
  context?: string
  workers: string
  discoveryInterval: string
  cacheFlushInterval: string
  clientGoQps: string
  clientGoBurst: string
  targetLabelSelector: string
  revisionNamespace?: string
  applyStrategy: string
  applyStrategySsaFieldManager: string
  metricsAddress: string
  healthProbeBindAddress: string
  zapLogLevel: string
  zapEncoder: string
  /** Upstream's development mode: console encoder and debug level unless those are given. */
  zapDevel: boolean
  zapTimeEncoding: string
  zapStacktraceLevel: string
  leaderElection: boolean
  leaderElectionResourceLock: string
  leaderElectionNamespace: string
  leaderElectionId: string
  leaderElectionLeaseDuration: string
  leaderElectionRenewDeadline: string
  leaderElectionRetryPeriod: string
  hookResponseSizeLimit: string
  hookMaxInFlight: string
  eventsQps: string
  eventsBurst: string
  pprofAddress: string
  hookAddress?: string[]
  healthzMaxEventLoopDelay: string
  /** Client-side feature gates, `WatchListClient=false` (our addition). */
  featureGates?: string
}

/**
 * Reads a Go boolean flag value (`--leader-election=false`), as Go's flag package spells them.
 *
 * @throws CliError with exit code {@link USAGE_EXIT_CODE} for anything else.
 */
export function parseGoBool(flag: string, text: string): boolean {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false
  throw usage(`--${flag} must be true or false, got "${text}"`)
}

/**
 * Applies `--zap-devel` as controller-runtime does: development mode changes the defaults of the
 * encoder (console) and the level (debug), so an explicit `--zap-log-level=5` or
 * `--zap-encoder=json` still wins. `given` says whether a flag was on the command line.
 */
export function withDevelopmentDefaults(
  opts: RunOptions,
  given: (key: 'zapEncoder' | 'zapLogLevel' | 'zapStacktraceLevel') => boolean
): RunOptions {
  if (!opts.zapDevel) return opts
  return {
    ...opts,
    zapEncoder: given('zapEncoder') ? opts.zapEncoder : 'console',
    zapLogLevel: given('zapLogLevel') ? opts.zapLogLevel : 'debug',
    // Not a value the flag takes: development mode's own default.
    zapStacktraceLevel: given('zapStacktraceLevel')
      ? opts.zapStacktraceLevel
      : DEVEL_STACKTRACE_LEVEL,
  }
}

/** The stack-trace level of `--zap-devel` (warn), which the flag itself does not accept. */
const DEVEL_STACKTRACE_LEVEL = 'devel-warn'

/** Leader-election settings; see spec §5. */
export interface LeaderElectionFlags {
  readonly enabled: boolean
  /** Empty: the Pod's namespace (in-cluster only). */
  readonly namespace: string
  readonly id: string
  readonly leaseDurationMs: number
  readonly renewDeadlineMs: number
  readonly retryPeriodMs: number
}

/** Checked, typed `metactl run` settings. */
export interface RunConfig {
  readonly kubeconfig?: string
  readonly context?: string
  readonly workers: number
  readonly discoveryIntervalMs: number
  readonly cacheFlushIntervalMs: number
  readonly clientRateLimit: { readonly qps: number; readonly burst: number }
  readonly targetLabelSelector: string
  /** Home of cluster-scoped parents' ControllerRevisions. */
  readonly revisionNamespace: string
  /** How children are written (`--apply-strategy`). */
  readonly applyStrategy: ApplyStrategy
  /** The field manager of server-side apply. */
  readonly ssaFieldManager: string
  readonly metricsAddress: { host: string; port: number } | undefined
  readonly probeAddress: { host: string; port: number } | undefined
  /** A named level, or a verbosity N that also writes `V(1)` to `V(N)`. */
  readonly logLevel: LogLevel | number
  readonly logFormat: LogFormat
  /** Lines at or above this level carry a stack trace (`--zap-stacktrace-level`). */
  readonly stacktraceLevel: 'info' | 'warn' | 'error' | 'panic'
  /** Renders a log line's time (`--zap-time-encoding`). */
  readonly logTime: (date: Date) => string | number
  readonly leaderElection: LeaderElectionFlags
  /** The ring of replicas (`--sharding`, an extension). */
  readonly sharding: ShardingFlags
  readonly hookResponseLimitBytes: number
  /** Concurrent hook calls per hosted controller, all its hooks together. */
  readonly hookMaxInFlight: number
  /** Per-object event refill rate in events/s. */
  readonly eventsQps: number
  readonly eventsBurst: number
  readonly pprofAddress: { host: string; port: number } | undefined
  /** `--hook-address` overrides, keyed by the hook URL's `host:port`. */
  readonly hookAddresses: HookAddressMap
  /** A longer event-loop stall fails `/healthz`; undefined: not checked. */
  readonly eventLoopStallMs: number | undefined
  /** Streaming initial lists for informers (client-go's `WatchListClient` gate). */
  readonly watchList: boolean
}

function usage(message: string): CliError {
  return new CliError(message, USAGE_EXIT_CODE)
}

function duration(flag: string, text: string): number {
  const ms = parseGoDuration(text)
  if (ms === undefined || ms <= 0)
    throw usage(`--${flag} must be a duration such as 30s or 5m, got "${text}"`)
  return ms
}

function nonNegative(flag: string, text: string, integer: boolean): number {
  const value = Number(text)
  if (
    text.trim() === '' ||
    !Number.isFinite(value) ||
    value < 0 ||
    (integer && !Number.isInteger(value))
  ) {
    throw usage(
      `--${flag} must be a ${integer ? 'non-negative integer' : 'non-negative number'}, got "${text}"`
    )
  }
  return value
}

function positiveInteger(flag: string, text: string): number {
  // Digits only: Number() would also take '1e3', '0x10' or ' 4 '.
  const value = /^\d+$/.test(text) ? Number(text) : NaN
  if (!Number.isSafeInteger(value) || value < 1)
    throw usage(`--${flag} must be a positive integer, got "${text}"`)
  return value
}

function logLevel(text: string): LogLevel | number {
  // Upstream takes zap levels or an integer verbosity N, which writes V(1) to V(N) too.
  if (/^\d+$/.test(text)) return Number(text) === 0 ? 'info' : Number(text)
  if (text === 'debug' || text === 'info' || text === 'warn' || text === 'error') return text
  throw usage(`--zap-log-level must be debug, info, warn, error or a number, got "${text}"`)
}

function logFormat(text: string): LogFormat {
  if (text === 'json') return 'json'
  if (text === 'console' || text === 'text') return 'text'
  throw usage(`--zap-encoder must be json or console, got "${text}"`)
}

/** zap's time encoders, by their flag names. */
const TIME_ENCODINGS: Readonly<Record<string, (date: Date) => string | number>> = {
  epoch: (date) => date.getTime() / 1000,
  millis: (date) => date.getTime(),
  nano: (date) => date.getTime() * 1_000_000,
  iso8601: (date) => date.toISOString(),
  rfc3339: (date) => date.toISOString().replace(/\.\d+Z$/, 'Z'),
  // Go's RFC3339Nano drops trailing zeros of the fraction (and the dot with them).
  rfc3339nano: (date) => date.toISOString().replace(/\.?0+Z$/, 'Z'),
}

function timeEncoding(text: string): (date: Date) => string | number {
  const encode = TIME_ENCODINGS[text]
  if (encode === undefined)
    throw usage(
      `--zap-time-encoding must be one of ${Object.keys(TIME_ENCODINGS).join(', ')}, got "${text}"`
    )
  return encode
}

function stacktraceLevel(text: string): 'info' | 'warn' | 'error' | 'panic' {
  if (text === DEVEL_STACKTRACE_LEVEL) return 'warn'
  if (text === 'info' || text === 'error' || text === 'panic') return text
  throw usage(`--zap-stacktrace-level must be info, error or panic, got "${text}"`)
}

function listenAddress(flag: string, text: string): { host: string; port: number } | undefined {
  try {
    return parseListenAddress(text)
  } catch (error) {
    throw usage(`--${flag}: ${messageOf(error)}`)
  }
}

function hookAddresses(values: readonly string[]): HookAddressMap {
  const map = new Map<string, { host: string; port: number }>()
  for (const value of values) {
    try {
      const [key, address] = parseHookAddress(value)
      map.set(key, address)
    } catch (error) {
      throw usage(`--hook-address ${messageOf(error)}`)
    }
  }
  return map
}

function selector(text: string): string {
  if (text === '') return text
  try {
    compileLabelSelector(parseSelectorString(text))
  } catch (error) {
    throw usage(`--target-label-selector "${text}" is not a label selector: ` + messageOf(error))
  }
  return text
}

/**
 * Reads `--events-qps`: a number, or a fraction such as upstream's default `1/300`.
 *
 * @throws {@link CliError} for anything else, or a value that is not positive.
 */
export function parseEventsQps(text: string): number {
  const fraction = /^\s*([0-9.]+)\s*\/\s*([0-9.]+)\s*$/.exec(text)
  const value = fraction === null ? Number(text) : Number(fraction[1]) / Number(fraction[2])
  if (!Number.isFinite(value) || value <= 0) {
    throw usage(`--events-qps must be a positive number such as 0.5 or 1/300, got "${text}"`)
  }
  return value
}

/** Parses `64Mi`, `1G`, `500000`: bytes with an optional binary or decimal suffix. */
export function parseByteSize(flag: string, text: string): number {
  const match = /^(\d+)(Ki|Mi|Gi|k|M|G)?$/.exec(text.trim())
  const factors: Record<string, number> = {
    '': 1,
    Ki: 1024,
    Mi: 1024 ** 2,
    Gi: 1024 ** 3,
    k: 1000,
    M: 1000 ** 2,
    G: 1000 ** 3,
  }
  const bytes = match === null ? NaN : Number(match[1]) * (factors[match[2] ?? ''] ?? NaN)
  if (!(bytes > 0) || !Number.isSafeInteger(bytes))
    throw usage(`--${flag} must be a size such as 64Mi or 1000000, got "${text}"`)
  return bytes
}

function leaderElection(opts: RunOptions): LeaderElectionFlags {
  if (opts.leaderElectionResourceLock !== 'leases')
    throw usage(
      `--leader-election-resource-lock must be leases (the only lock client-go still offers), ` +
        `got "${opts.leaderElectionResourceLock}"`
    )
  if (opts.leaderElectionId === '') throw usage('--leader-election-id must not be empty')
  const flags: LeaderElectionFlags = {
    enabled: opts.leaderElection,
    namespace: opts.leaderElectionNamespace,
    id: opts.leaderElectionId,
    leaseDurationMs: duration('leader-election-lease-duration', opts.leaderElectionLeaseDuration),
    renewDeadlineMs: duration('leader-election-renew-deadline', opts.leaderElectionRenewDeadline),
    retryPeriodMs: duration('leader-election-retry-period', opts.leaderElectionRetryPeriod),
  }
  if (!(
    flags.leaseDurationMs > flags.renewDeadlineMs && flags.renewDeadlineMs > flags.retryPeriodMs
  ))
    throw usage(
      'leader election needs --leader-election-lease-duration > --leader-election-renew-deadline ' +
        '> --leader-election-retry-period'
    )
  return flags
}

function applyStrategy(text: string): ApplyStrategy {
  try {
    return parseApplyStrategy(text)
  } catch (error) {
    // Upstream fails startup on an unknown strategy; say so plainly, without a stack trace.
    throw usage(`--apply-strategy: ${messageOf(error)}`)
  }
}

function fieldManager(text: string): string {
  if (text === '') throw usage('--apply-strategy-ssa-field-manager must not be empty')
  return text
}

/**
 * Where cluster-scoped parents' ControllerRevisions go: the flag, else the engine's own
 * namespace as the deployment passes it (`POD_NAMESPACE`, from the downward API), else `default`.
 */
function revisionNamespaceOf(opts: RunOptions, env: NodeJS.ProcessEnv): string {
  if (opts.revisionNamespace !== undefined && opts.revisionNamespace !== '')
    return opts.revisionNamespace
  const fromEnv = env['POD_NAMESPACE']
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : DEFAULT_REVISION_NAMESPACE
}

/**
 * Checks every flag of `metactl run` and returns typed settings; does no I/O.
 *
 * @throws CliError with exit code {@link USAGE_EXIT_CODE} for the first invalid flag.
 */
export function parseRunFlags(opts: RunOptions, env: NodeJS.ProcessEnv = process.env): RunConfig {
  return {
    ...(opts.kubeconfig === undefined ? {} : { kubeconfig: opts.kubeconfig }),
    ...(opts.context === undefined ? {} : { context: opts.context }),
    workers: nonNegative('workers', opts.workers, true),
    discoveryIntervalMs: duration('discovery-interval', opts.discoveryInterval),
    cacheFlushIntervalMs: duration('cache-flush-interval', opts.cacheFlushInterval),
    clientRateLimit: {
      qps: nonNegative('client-go-qps', opts.clientGoQps, false),
      burst: Math.max(1, nonNegative('client-go-burst', opts.clientGoBurst, true)),
    },
    targetLabelSelector: selector(opts.targetLabelSelector),
    revisionNamespace: revisionNamespaceOf(opts, env),
    applyStrategy: applyStrategy(opts.applyStrategy),
    ssaFieldManager: fieldManager(opts.applyStrategySsaFieldManager),
    metricsAddress: listenAddress('metrics-address', opts.metricsAddress),
    probeAddress: listenAddress('health-probe-bind-address', opts.healthProbeBindAddress),
    logLevel: logLevel(opts.zapLogLevel),
    logFormat: logFormat(opts.zapEncoder),
    stacktraceLevel: stacktraceLevel(opts.zapStacktraceLevel),
    logTime: timeEncoding(opts.zapTimeEncoding),
    leaderElection: leaderElection(opts),
    sharding: parseShardingFlags(opts, opts.leaderElection),
    hookResponseLimitBytes: parseByteSize('hook-response-size-limit', opts.hookResponseSizeLimit),
    hookMaxInFlight: positiveInteger('hook-max-in-flight', opts.hookMaxInFlight),
    eventsQps: parseEventsQps(opts.eventsQps),
    eventsBurst: Math.max(1, nonNegative('events-burst', opts.eventsBurst, true)),
    pprofAddress: listenAddress('pprof-address', opts.pprofAddress),
    hookAddresses: hookAddresses(opts.hookAddress ?? []),
    eventLoopStallMs:
      opts.healthzMaxEventLoopDelay.trim() === '0'
        ? undefined
        : duration('healthz-max-event-loop-delay', opts.healthzMaxEventLoopDelay),
    watchList: parseClientFeatureGates(opts.featureGates, env).watchListClient,
  }
}

/** The defaults of the leader-election duration flags, as Go durations. */
export const LEADER_ELECTION_FLAG_DEFAULTS: {
  readonly leaseDuration: string
  readonly renewDeadline: string
  readonly retryPeriod: string
} = {
  leaseDuration: `${LEADER_ELECTION_DEFAULTS.leaseDurationMs / 1000}s`,
  renewDeadline: `${LEADER_ELECTION_DEFAULTS.renewDeadlineMs / 1000}s`,
  retryPeriod: `${LEADER_ELECTION_DEFAULTS.retryPeriodMs / 1000}s`,
} as const
