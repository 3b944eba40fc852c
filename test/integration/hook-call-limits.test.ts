// postWebhook against a real HTTP server on loopback: 429 handling, the Retry-After cap, the
// response size limit, and one message per timeout.
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { HookCallError } from '../../src/engine/hooks/hook-errors.js'
import { MAX_HOOK_RETRY_AFTER_MS, postWebhook } from '../../src/engine/hooks/post-webhook.js'
import { RetryAfterError } from '../../src/runtime/queue/reconcile-errors.js'

const MiB = 1024 * 1024
let base = ''
let bigBytesSent = 0
const server = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    switch (req.url ?? '') {
      case '/429':
        res.writeHead(429).end('slow down')
        return
      case '/429-day':
        res.writeHead(429, { 'retry-after': '86400' }).end()
        return
      case '/429-2s':
        res.writeHead(429, { 'retry-after': '2' }).end()
        return
      case '/declared-big':
        res.writeHead(200, { 'content-length': String(10 * MiB) })
        res.write(Buffer.alloc(1024, 'a'))
        return
      case '/streamed-big': {
        // 64 MiB in 64 KiB chunks, no Content-Length: only a streamed check can stop it.
        res.writeHead(200, { 'content-type': 'application/json' })
        const chunk = Buffer.alloc(64 * 1024, 'a')
        const write = (): void => {
          while (bigBytesSent < 64 * MiB) {
            bigBytesSent += chunk.length
            if (!res.write(chunk)) {
              res.once('drain', write)
              return
            }
          }
          res.end()
        }
        res.on('close', () => undefined)
        write()
        return
      }
      case '/no-headers':
        return
      case '/stalled-body':
        res.writeHead(200, { 'content-type': 'application/json' })
        res.write('{"status":')
        return
      default:
        res.writeHead(200).end('{}')
    }
  })
})

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
after(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

describe('postWebhook limits', () => {
  it('turns a 429 without Retry-After into an ordinary failure (exponential backoff)', async () => {
    const error = await postWebhook(`${base}/429`, {}, { timeoutMs: 2000 }).catch((e: unknown) => e)
    assert.ok(error instanceof HookCallError, String(error))
    assert.ok(!(error instanceof RetryAfterError))
    assert.match(error.message, /429 without a usable Retry-After/)
  })

  it('honours a short Retry-After and caps a long one', async () => {
    const short = await postWebhook(`${base}/429-2s`, {}, { timeoutMs: 2000 }).catch(
      (e: unknown) => e
    )
    assert.ok(short instanceof RetryAfterError)
    assert.equal(short.afterMs, 2000)
    const long = await postWebhook(`${base}/429-day`, {}, { timeoutMs: 2000 }).catch(
      (e: unknown) => e
    )
    assert.ok(long instanceof RetryAfterError)
    assert.equal(long.afterMs, MAX_HOOK_RETRY_AFTER_MS)
  })

  it('refuses a declared oversized body before reading it', async () => {
    const error = await postWebhook(
      `${base}/declared-big`,
      {},
      { timeoutMs: 2000, maxResponseBytes: MiB }
    ).catch((e: unknown) => e)
    assert.ok(error instanceof HookCallError)
    assert.equal(error.message, `response too large: more than ${MiB} bytes`)
  })

  it('stops reading a streamed body as soon as it passes the limit', async () => {
    const error = await postWebhook(
      `${base}/streamed-big`,
      {},
      { timeoutMs: 10_000, maxResponseBytes: MiB }
    ).catch((e: unknown) => e)
    assert.ok(error instanceof HookCallError)
    assert.equal(error.message, `response too large: more than ${MiB} bytes`)
    assert.equal(error.target, `${base}/streamed-big`)
    await new Promise((resolve) => setTimeout(resolve, 200))
    // The server could only push what the socket buffers held after the client hung up.
    assert.ok(bigBytesSent < 16 * MiB, `server sent ${bigBytesSent} bytes`)
  })

  it('reports every timeout with one message', async () => {
    const messages = new Set<string>()
    for (const path of ['/no-headers', '/stalled-body']) {
      const error = await postWebhook(`${base}${path}`, {}, { timeoutMs: 300 }).catch(
        (e: unknown) => e
      )
      assert.ok(error instanceof HookCallError, String(error))
      messages.add(error.message.replace(path, '<path>'))
    }
    assert.deepEqual([...messages], [`http error: POST ${base}<path>: timed out after 300 ms`])
  })
})
