import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Option } from 'commander'
import { GoFlagCommand, normalizeGoFlags } from './go-flags.js'
import type { GoFlagKind } from './go-flags.js'

const KINDS = new Map<string, GoFlagKind>([
  ['workers', 'value'],
  ['leader-election', 'bool'],
  ['help', 'switch'],
])

describe('normalizeGoFlags', () => {
  it("reads every spelling Go's flag package reads", () => {
    for (const args of [['-workers=5'], ['-workers', '5'], ['--workers=5'], ['--workers', '5']])
      assert.deepEqual(normalizeGoFlags(args, KINDS), ['--workers=5'], args.join(' '))
  })

  it('takes the next argument as the value even when it starts with a dash, as Go does', () => {
    assert.deepEqual(normalizeGoFlags(['-workers', '-1'], KINDS), ['--workers=-1'])
  })

  it('never lets a boolean take the next argument', () => {
    assert.deepEqual(normalizeGoFlags(['-leader-election', '-workers=2'], KINDS), [
      '--leader-election=true',
      '--workers=2',
    ])
    assert.deepEqual(normalizeGoFlags(['-leader-election=false'], KINDS), [
      '--leader-election=false',
    ])
    // Go stops at the first non-flag argument: `false` here is an operand, not the value.
    assert.deepEqual(normalizeGoFlags(['-leader-election', 'false', '-workers=2'], KINDS), [
      '--leader-election=true',
      'false',
      '-workers=2',
    ])
  })

  it('stops at -- and passes unknown flags on unchanged for commander to refuse', () => {
    assert.deepEqual(normalizeGoFlags(['-nope=1', '-help', '--', '-workers=1'], KINDS), [
      '-nope=1',
      '--help',
      '--',
      '-workers=1',
    ])
    assert.deepEqual(normalizeGoFlags(['-workers'], KINDS), ['--workers'])
  })
})

describe('GoFlagCommand', () => {
  it('reads options added after construction in Go syntax', () => {
    let seen: Record<string, unknown> = {}
    const command = new GoFlagCommand('x')
      .exitOverride()
      .option('--shard-count <n>', 'added later', '1')
      .addOption(new Option('--flag [bool]', 'a boolean').preset('true'))
      .action((opts: Record<string, unknown>) => {
        seen = opts
      })
    command.parse(['-shard-count', '3', '-flag'], { from: 'user' })
    assert.deepEqual(seen, { shardCount: '3', flag: 'true' })
  })
})
