import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { Agent } from '../../kube/undici-core.js'
import { timersLeftBy } from '../../../test/support/live-timers.js'
import { HookCallError } from './hook-errors.js'
import { parseHookRetryAfterMs, postWebhook } from './post-webhook.js'

/** A fixed "now": Tue, 14 Nov 2023 22:13:20 GMT. */
const NOW = Date.UTC(2023, 10, 14, 22, 13, 20)

describe('parseHookRetryAfterMs', () => {
  it('reads integer seconds as milliseconds', () => {
    assert.equal(parseHookRetryAfterMs('0', NOW), 0)
    assert.equal(parseHookRetryAfterMs('1', NOW), 1000)
    assert.equal(parseHookRetryAfterMs('120', NOW), 120_000)
  })

  it('ignores surrounding whitespace', () => {
    assert.equal(parseHookRetryAfterMs(' 30 ', NOW), 30_000)
  })

  it('reads an HTTP date in the future as the whole seconds until then', () => {
    const in90s = new Date(NOW + 90_000).toUTCString()
    assert.equal(parseHookRetryAfterMs(in90s, NOW), 90_000)
    assert.equal(parseHookRetryAfterMs('Tue, 14 Nov 2023 22:14:20 GMT', NOW), 60_000)
  })

  it('rounds a partial second until the date up to a whole second', () => {
    const date = 'Tue, 14 Nov 2023 22:13:30 GMT'
    assert.equal(parseHookRetryAfterMs(date, NOW + 1), 10_000, '9.999 s rounds up to 10 s')
    assert.equal(parseHookRetryAfterMs(date, NOW + 9_001), 1000, '0.999 s rounds up to 1 s')
    assert.equal(parseHookRetryAfterMs(date, NOW + 8_999), 2000, '1.001 s rounds up to 2 s')
  })

  it('gives 0 for an HTTP date that is now or in the past', () => {
    assert.equal(parseHookRetryAfterMs(new Date(NOW).toUTCString(), NOW), 0)
    assert.equal(parseHookRetryAfterMs('Tue, 14 Nov 2023 22:00:00 GMT', NOW), 0)
    assert.equal(parseHookRetryAfterMs('Thu, 01 Jan 1970 00:00:00 GMT', NOW), 0)
  })

  it('gives 0 for garbage', () => {
    for (const header of [
      '',
      '   ',
      'soon',
      'ten',
      '1e3',
      '0x10',
      '5 seconds',
      'Tuesday',
      '1.5',
      '-5',
    ]) {
      assert.equal(parseHookRetryAfterMs(header, NOW), 0, JSON.stringify(header))
    }
  })

  it('gives 0 for text that only the lenient Date.parse reads as a date, as upstream does', () => {
    for (const header of ['retry 2099', '2099-01-01', 'abc 2099']) {
      assert.equal(parseHookRetryAfterMs(header, NOW), 0, JSON.stringify(header))
    }
  })

  it('gives 0 for an absent header', () => {
    assert.equal(parseHookRetryAfterMs(undefined, NOW), 0)
  })
})

describe('postWebhook', () => {
  it("lets go of each call's deadline when the call ends", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"children":[]}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sync`
    const dispatcher = new Agent()
    let left: number
    try {
      left = await timersLeftBy(async () => {
        for (let i = 0; i < 20; i++) {
          const answer = await postWebhook(url, { i }, { timeoutMs: 60_000, dispatcher })
          assert.equal(answer.body, '{"children":[]}')
        }
      })
    } finally {
      await dispatcher.close()
      server.close()
    }
    // A deadline kept per call would leave 20 (undici's and the server's own timers are about 6).
    assert.ok(left <= 10, `${left} timers outlive their calls`)
  })

  it('reports a hook URL that does not parse as a hook call error, not a thrown TypeError', async () => {
    await assert.rejects(
      postWebhook('not a url', {}, { timeoutMs: 1000 }),
      (error) =>
        error instanceof HookCallError && error.message.includes('http error: POST not a url')
    )
  })
})
