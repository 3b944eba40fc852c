import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CliError } from '../cli-error.js'
import { parseByteSize, parseRunFlags, USAGE_EXIT_CODE } from './run-flags.js'
import type { RunOptions } from './run-flags.js'

const defaults: RunOptions = {
  workers: '5',
  discoveryInterval: '30s',
  cacheFlushInterval: '30m',
  clientGoQps: '1000',
  clientGoBurst: '2000',
  targetLabelSelector: '',
  metricsAddress: '127.0.0.1:9999',
  healthProbeBindAddress: ':8081',
  zapLogLevel: 'info',
  zapEncoder: 'json',
  zapDevel: false,
  zapTimeEncoding: 'iso8601',
  zapStacktraceLevel: 'error',
  leaderElection: false,
  leaderElectionResourceLock: 'leases',
  leaderElectionNamespace: '',
  leaderElectionId: 'metacontroller',
  leaderElectionLeaseDuration: '15s',
  leaderElectionRenewDeadline: '10s',
  leaderElectionRetryPeriod: '2s',
  hookResponseSizeLimit: '64Mi',
  hookMaxInFlight: '16',
  eventsQps: '1/300',
  eventsBurst: '25',
  pprofAddress: '0',
  applyStrategy: 'dynamic-apply',
  applyStrategySsaFieldManager: 'metacontroller',
  healthzMaxEventLoopDelay: '10s',
}

function usageError(overrides: Partial<RunOptions>): CliError {
  try {
    parseRunFlags({ ...defaults, ...overrides })
  } catch (error) {
    assert.ok(error instanceof CliError, String(error))
    assert.equal(error.exitCode, USAGE_EXIT_CODE)
    assert.ok(!error.message.includes('\n'), 'one line')
    return error
  }
  assert.fail('expected a usage error')
}

describe('parseRunFlags', () => {
  it("streams initial lists unless WatchListClient is off by --feature-gates or client-go's variable", () => {
    const watchList = (featureGates: string | undefined, env: NodeJS.ProcessEnv = {}): boolean =>
      parseRunFlags({ ...defaults, ...(featureGates === undefined ? {} : { featureGates }) }, env)
        .watchList
    assert.equal(watchList(undefined), true)
    assert.equal(watchList('WatchListClient=false'), false)
    assert.equal(watchList(undefined, { KUBE_FEATURE_WatchListClient: 'false' }), false)
    assert.equal(watchList('WatchListClient=true', { KUBE_FEATURE_WatchListClient: 'false' }), true)
    assert.match(
      usageError({ featureGates: 'WatchList=false' }).message,
      /unknown gate.*WatchListClient/
    )
    assert.match(usageError({ featureGates: 'WatchListClient=off' }).message, /true or false/)
  })

  it('refuses unknown zap stack-trace levels and time encodings with the flag name', () => {
    assert.match(usageError({ zapStacktraceLevel: 'loud' }).message, /--zap-stacktrace-level/)
    assert.match(usageError({ zapTimeEncoding: 'sundial' }).message, /--zap-time-encoding/)
  })

  it('maps --hook-address values by host:port and refuses malformed ones', () => {
    const config = parseRunFlags({
      ...defaults,
      hookAddress: ['hooks.default:80=127.0.0.1:8080', 'Auth.NS:443=[::1]:8443'],
    })
    assert.deepEqual(
      [...config.hookAddresses],
      [
        ['hooks.default:80', { host: '127.0.0.1', port: 8080 }],
        ['auth.ns:443', { host: '::1', port: 8443 }],
      ]
    )
    assert.match(usageError({ hookAddress: ['hooks.default'] }).message, /--hook-address/)
  })

  it('accepts the defaults with client-go leader-election durations', () => {
    const config = parseRunFlags(defaults)
    assert.deepEqual(config.leaderElection, {
      enabled: false,
      namespace: '',
      id: 'metacontroller',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    })
    assert.equal(config.hookResponseLimitBytes, 64 * 1024 * 1024)
    assert.deepEqual(config.probeAddress, { host: '0.0.0.0', port: 8081 })
  })

  it('rejects an unparsable target label selector with one line', () => {
    assert.match(
      usageError({ targetLabelSelector: 'a in (' }).message,
      /--target-label-selector "a in \("/
    )
  })

  it('rejects bad durations, numbers, addresses, levels and sizes', () => {
    assert.match(usageError({ discoveryInterval: 'soon' }).message, /--discovery-interval/)
    assert.match(usageError({ workers: '-1' }).message, /--workers/)
    assert.match(usageError({ workers: '' }).message, /--workers/)
    assert.match(usageError({ metricsAddress: 'nope' }).message, /--metrics-address/)
    assert.match(usageError({ zapLogLevel: 'loud' }).message, /--zap-log-level/)
    assert.match(
      usageError({ hookResponseSizeLimit: '12XB' }).message,
      /--hook-response-size-limit/
    )
  })

  it('rejects leader-election settings client-go would refuse', () => {
    assert.match(
      usageError({ leaderElectionResourceLock: 'configmaps' }).message,
      /only leases|must be leases/
    )
    assert.match(
      usageError({ leaderElectionLeaseDuration: '5s', leaderElectionRenewDeadline: '10s' }).message,
      /lease-duration > --leader-election-renew-deadline/
    )
    assert.match(usageError({ leaderElectionId: '' }).message, /--leader-election-id/)
  })

  it('reads the event-loop stall threshold of /healthz; 0 disables it', () => {
    assert.equal(parseRunFlags(defaults).eventLoopStallMs, 10_000)
    assert.equal(
      parseRunFlags({ ...defaults, healthzMaxEventLoopDelay: '0' }).eventLoopStallMs,
      undefined
    )
    assert.match(
      usageError({ healthzMaxEventLoopDelay: 'soon' }).message,
      /--healthz-max-event-loop-delay/
    )
  })

  it("reads zap's time encodings and stack-trace levels", () => {
    const date = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 600))
    const encode = (zapTimeEncoding: string): string | number =>
      parseRunFlags({ ...defaults, zapTimeEncoding }).logTime(date)
    assert.equal(encode('iso8601'), '2026-01-02T03:04:05.600Z')
    assert.equal(encode('rfc3339'), '2026-01-02T03:04:05Z')
    assert.equal(encode('rfc3339nano'), '2026-01-02T03:04:05.6Z')
    assert.equal(encode('epoch'), date.getTime() / 1000)
    assert.equal(encode('millis'), date.getTime())
    assert.equal(encode('nano'), date.getTime() * 1_000_000)
    assert.match(usageError({ zapTimeEncoding: 'unix' }).message, /--zap-time-encoding/)
    assert.match(usageError({ zapStacktraceLevel: 'warn' }).message, /--zap-stacktrace-level/)
  })

  it('reads --hook-max-in-flight as a positive integer and refuses anything else', () => {
    assert.equal(parseRunFlags(defaults).hookMaxInFlight, 16)
    assert.equal(parseRunFlags({ ...defaults, hookMaxInFlight: '2' }).hookMaxInFlight, 2)
    for (const bad of ['0', '-1', '1.5', '', 'many', '1e3', ' 4'])
      assert.match(usageError({ hookMaxInFlight: bad }).message, /--hook-max-in-flight/, bad)
  })

  it('parses sizes with binary and decimal suffixes', () => {
    assert.equal(parseByteSize('x', '1Ki'), 1024)
    assert.equal(parseByteSize('x', '2M'), 2_000_000)
    assert.equal(parseByteSize('x', '123'), 123)
  })
})
