import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CliError } from '../cli-error.js'
import { parseEventsQps } from './run-flags.js'
import { main } from '../main.js'
import { runCommand } from './run.js'

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
