// Proves the SDK's webhook server over real HTTP on loopback: routing, the JSON contract,
// errors as 500 with a message and a log line, size and type limits, /healthz, graceful close.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { request } from 'undici'
import { defineCompositeHook, serveHooks } from '../../src/sdk/index.js'
import type { HookServer } from '../../src/sdk/index.js'

describe('serveHooks', () => {
  let server: HookServer
  const logged: { msg: string; error?: string }[] = []

  before(async () => {
    server = await serveHooks(
      {
        '/sync': defineCompositeHook(({ parent }) => ({
          status: { name: parent.metadata.name ?? '' },
        })),
        '/boom': () => {
          throw new Error('cannot build children')
        },
        '/slow': () =>
          new Promise((resolve) =>
            setTimeout(() => {
              resolve({ late: true })
            }, 300)
          ),
      },
      { port: 0, bodyLimitBytes: 1024, log: (entry) => logged.push(entry) }
    )
  })

  after(async () => {
    await server.close()
  })

  const post = (path: string, body: string, type = 'application/json') =>
    request(`${server.url}${path}`, { method: 'POST', body, headers: { 'content-type': type } })

  it('answers a hook request with its JSON response', async () => {
    const res = await post(
      '/sync',
      JSON.stringify({ parent: { metadata: { name: 'web' } }, children: {} })
    )
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['content-type'], 'application/json')
    assert.deepEqual(await res.body.json(), { status: { name: 'web' } })
  })

  it('turns a throwing hook into a 500 with the message, and logs it', async () => {
    const res = await post('/boom', '{}')
    assert.equal(res.statusCode, 500)
    assert.match(await res.body.text(), /cannot build children/)
    assert.ok(logged.some((l) => l.msg === 'hook failed' && l.error === 'cannot build children'))
  })

  it('refuses wrong methods, content types, bodies and paths with clear statuses', async () => {
    const get = await request(`${server.url}/sync`)
    assert.equal(get.statusCode, 405)
    await get.body.text()
    const text = await post('/sync', '{}', 'text/plain')
    assert.equal(text.statusCode, 415)
    await text.body.text()
    const bad = await post('/sync', '{not json')
    assert.equal(bad.statusCode, 400)
    await bad.body.text()
    const big = await post('/sync', JSON.stringify({ pad: 'x'.repeat(2000) }))
    assert.equal(big.statusCode, 413)
    await big.body.text()
    const missing = await post('/nope', '{}')
    assert.equal(missing.statusCode, 404)
    await missing.body.text()
  })

  it('serves /healthz', async () => {
    const res = await request(`${server.url}/healthz`)
    assert.equal(res.statusCode, 200)
    assert.equal(await res.body.text(), 'ok')
  })

  it('lets an in-flight request finish when closing', async () => {
    const other = await serveHooks(
      {
        '/slow': () =>
          new Promise((r) =>
            setTimeout(() => {
              r({ done: 1 })
            }, 200)
          ),
      },
      { port: 0 }
    )
    const pending = request(`${other.url}/slow`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    })
    await new Promise((resolve) => setTimeout(resolve, 50))
    const closed = other.close()
    const res = await pending
    assert.deepEqual(await res.body.json(), { done: 1 })
    await closed
  })
})
