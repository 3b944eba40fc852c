import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CliError } from '../cli-error.js'
import { main } from '../main.js'
import { runCommand } from './run.js'
import { parseEventsQps, parseGoBool, parseRunFlags, withDevelopmentDefaults } from './run-flags.js'
import type { RunConfig, RunOptions } from './run-flags.js'

async function run(...args: string[]): Promise<{ code: number; err: string[] }> {
  const err: string[] = []
  const code = await main(['node', 'metactl', 'run', ...args], {
    out: () => undefined,
    err: (line) => err.push(line),
  })
  return { code, err }
}

describe('parseEventsQps', () => {
  it('reads numbers and fractions such as the default 1/300', () => {
    assert.equal(parseEventsQps('1/300'), 1 / 300)
    assert.equal(parseEventsQps(' 2 / 4 '), 0.5)
    assert.equal(parseEventsQps('0.5'), 0.5)
    assert.equal(parseEventsQps('10'), 10)
  })

  it('refuses zero, negative and unreadable values with the flag name', () => {
    for (const text of ['0', '-1', '1/0', 'fast', '', '1/x']) {
      assert.throws(
        () => parseEventsQps(text),
        (error: unknown) => error instanceof CliError && error.message.includes('--events-qps'),
        JSON.stringify(text)
      )
    }
  })
})

describe('metactl run flags', () => {
  it('refuses an unknown --apply-strategy before connecting, with a clear one-line error', async () => {
    const { code, err } = await run('--apply-strategy', 'client-side-apply')
    assert.equal(code, 2)
    assert.deepEqual(err, [
      'metactl: --apply-strategy: unknown apply strategy "client-side-apply": use dynamic-apply ' +
        'or server-side-apply (empty means dynamic-apply)',
    ])
  })

  it('refuses an empty --apply-strategy-ssa-field-manager', async () => {
    const { code, err } = await run('--apply-strategy-ssa-field-manager', '')
    assert.equal(code, 2)
    assert.match(err.join('\n'), /field-manager must not be empty/)
  })

  it('documents both flags with their defaults in --help', () => {
    const help = runCommand().helpInformation()
    assert.match(help, /--apply-strategy <strategy>[\s\S]*default: "dynamic-apply"/)
    assert.match(help, /--apply-strategy-ssa-field-manager <name>[\s\S]*default: "metacontroller"/)
  })
})

/** Parses `args` as `metactl run` would, with the engine replaced by a capture of its settings. */
async function settings(args: readonly string[]): Promise<RunConfig> {
  let captured: RunConfig | undefined
  const command = runCommand()
    .exitOverride()
    .action((opts: RunOptions, self: typeof command) => {
      captured = parseRunFlags(
        withDevelopmentDefaults(opts, (key) => self.getOptionValueSource(key) === 'cli')
      )
    })
  await command.parseAsync([...args], { from: 'user' })
  assert.ok(captured !== undefined)
  return captured
}

describe('metactl run logging and boolean flags', () => {
  it("accepts the args of upstream's production and leader-election manifests", async () => {
    // manifests/production, then examples/leader-election/manifest/args.yaml.
    const production = await settings(['--zap-log-level=4', '--discovery-interval=20s'])
    assert.equal(production.logLevel, 4, 'V(4): API writes')
    assert.equal(production.stacktraceLevel, 'error')
    assert.equal(production.logFormat, 'json')
    assert.equal(production.discoveryIntervalMs, 20_000)
    const example = await settings([
      '--zap-devel',
      '--zap-log-level=5',
      '--discovery-interval=5s',
      '--leader-election',
    ])
    assert.equal(example.logFormat, 'text', '--zap-devel means the console encoder')
    assert.equal(example.logLevel, 5)
    assert.equal(example.stacktraceLevel, 'warn', 'development mode traces warnings')
    assert.equal(example.discoveryIntervalMs, 5_000)
    assert.equal(example.leaderElection.enabled, true)
  })

  it('lets explicit --zap-encoder and --zap-log-level win over --zap-devel', async () => {
    const config = await settings(['--zap-devel', '--zap-encoder=json', '--zap-log-level=warn'])
    assert.equal(config.logFormat, 'json')
    assert.equal(config.logLevel, 'warn')
    assert.equal(
      (await settings(['--zap-devel', '--zap-stacktrace-level=panic'])).stacktraceLevel,
      'panic'
    )
    const plain = await settings(['--zap-devel=false'])
    assert.equal(plain.logFormat, 'json')
    assert.equal(plain.logLevel, 'info')
  })

  it('reads Go booleans such as --leader-election=false', async () => {
    assert.equal((await settings(['--leader-election=false'])).leaderElection.enabled, false)
    assert.equal((await settings(['--leader-election=true'])).leaderElection.enabled, true)
    assert.equal((await settings([])).leaderElection.enabled, false)
    assert.equal(parseGoBool('x', 'T'), true)
    assert.equal(parseGoBool('x', '0'), false)
    assert.throws(
      () => parseGoBool('zap-devel', 'yes'),
      (error: unknown) => error instanceof CliError && error.message.includes('--zap-devel')
    )
  })

  it("reads Go's single-dash flags, values in the next argument and bare booleans", async () => {
    const config = await settings([
      '-workers=7',
      '-discovery-interval',
      '5s',
      '-leader-election',
      '-zap-devel=false',
      '--target-label-selector',
      'team=a',
    ])
    assert.equal(config.workers, 7)
    assert.equal(config.discoveryIntervalMs, 5_000)
    assert.equal(config.leaderElection.enabled, true)
    assert.equal(config.logFormat, 'json')
    assert.equal(config.targetLabelSelector, 'team=a')
  })

  it('refuses an unknown single-dash flag with a usage error', async () => {
    await assert.rejects(settings(['-no-such-flag=1']), /unknown option '-no-such-flag=1'/)
  })
})
