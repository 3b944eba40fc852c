import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { requestBuffered } from './buffered-request.js'
import type { BufferedRequestOptions } from './buffered-request.js'
import { Agent } from './undici-core.js'

/** Routes of the loopback server the tests talk to. */
const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  '/echo': (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-seen': req.method ?? '' })
      res.end(Buffer.concat(chunks))
    })
  },
  // Never answers: for aborts while the headers are awaited.
  '/hang': () => undefined,
  '/declared-large': (_req, res) => {
    res.writeHead(200, { 'content-length': '100' }).end('x'.repeat(100))
  },
  // Chunked, so only the bytes received tell the size.
  '/streamed-large': (_req, res) => {
    res.writeHead(200)
    for (let i = 0; i < 10; i++) res.write('x'.repeat(10))
    res.end()
  },
}

describe('requestBuffered', () => {
  const server = createServer((req, res) => routes[req.url ?? '']?.(req, res))
  const agent = new Agent()
  let origin = ''
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  after(async () => {
    await agent.destroy()
    server.closeAllConnections()
    server.close()
  })
  const options = (path: string, extra: Partial<BufferedRequestOptions> = {}) => ({
    origin,
    path,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"a":1}',
    headersTimeout: 5000,
    bodyTimeout: 5000,
    ...extra,
  })

  it('resolves with the status, the headers and the whole body as sent', async () => {
    const response = await requestBuffered(agent, options('/echo'))
    assert.equal(response.statusCode, 201)
    assert.equal(response.headers['x-seen'], 'POST')
    assert.equal(response.body.toString('utf8'), '{"a":1}')
  })

  it('rejects with the reason of a signal aborted before the request, sending nothing', async () => {
    const controller = new AbortController()
    const reason = new Error('stopped before')
    controller.abort(reason)
    await assert.rejects(
      requestBuffered(agent, options('/echo', { signal: controller.signal })),
      (e) => e === reason
    )
  })

  it('rejects with the reason of a signal aborted while the headers are awaited', async () => {
    const controller = new AbortController()
    const reason = new DOMException('late', 'TimeoutError')
    const pending = requestBuffered(agent, options('/hang', { signal: controller.signal }))
    setTimeout(() => {
      controller.abort(reason)
    }, 50)
    await assert.rejects(pending, (e) => e === reason)
  })

  it('fails with the given error on a declared length over the limit and on a longer body', async () => {
    const tooLarge = { limit: 50, error: () => new Error('too large') }
    for (const path of ['/declared-large', '/streamed-large'])
      await assert.rejects(requestBuffered(agent, options(path, { tooLarge })), /too large/)
    const fits = await requestBuffered(
      agent,
      options('/streamed-large', { tooLarge: { ...tooLarge, limit: 100 } })
    )
    assert.equal(fits.body.length, 100)
  })
})
