import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CliError } from '../cli-error.js'
import { parseShardingFlags } from './run-sharding-flags.js'
import type { ShardingOptions } from './run-sharding-flags.js'

function usageError(opts: ShardingOptions, leaderElection = false): CliError {
  try {
    parseShardingFlags(opts, leaderElection)
  } catch (error) {
    assert.ok(error instanceof CliError)
    assert.equal(error.exitCode, 2)
    return error
  }
  assert.fail('expected a usage error')
}

describe('parseShardingFlags', () => {
  it('is off by default, with leader election’s durations, a uid key and server-side watches', () => {
    assert.deepEqual(parseShardingFlags({}, false), {
      enabled: false,
      namespace: '',
      ring: 'metacontroller',
      identity: undefined,
      field: 'uid',
      serverSide: true,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    })
  })

  it('reads every flag', () => {
    const flags = parseShardingFlags(
      {
        sharding: true,
        shardingNamespace: 'mc',
        shardingRing: 'team-a',
        shardingIdentity: 'replica-1',
        shardKey: 'namespace',
        shardingLeaseDuration: '6s',
        shardingRenewDeadline: '4s',
        shardingRetryPeriod: '1s',
        shardingServerSide: false,
      },
      false
    )
    assert.equal(flags.serverSide, false)
    assert.equal(flags.enabled, true)
    assert.equal(flags.field, 'namespace')
    assert.equal(flags.identity, 'replica-1')
    assert.equal(flags.ring, 'team-a')
    assert.equal(flags.leaseDurationMs, 6000)
  })

  it('refuses sharding together with leader election, saying to pick one', () => {
    assert.match(usageError({ sharding: true }, true).message, /exclude each other/)
  })

  it('refuses a bad key, ring name or duration order with the flag named', () => {
    assert.match(usageError({ shardKey: 'name' }).message, /--shard-key must be uid or namespace/)
    assert.match(usageError({ shardingRing: 'Team_A' }).message, /--sharding-ring/)
    assert.match(usageError({ shardingLeaseDuration: 'soon' }).message, /--sharding-lease-duration/)
    assert.match(
      usageError({ shardingLeaseDuration: '5s', shardingRenewDeadline: '10s' }).message,
      /lease-duration > --sharding-renew-deadline/
    )
  })
})
