import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CliError } from '../cli-error.js'
import { parseEventsQps } from './run-flags.js'

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
