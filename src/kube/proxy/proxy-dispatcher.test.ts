import assert from 'node:assert/strict'
import { createServer as createHttpServer } from 'node:http'
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'

import { startForwardProxy } from '../../../test/support/forward-proxy.js'
import type { ForwardProxy } from '../../../test/support/forward-proxy.js'
import { makeTestPki } from '../../../test/support/test-pki.js'
import { buildConnector, request } from '../undici-core.js'
import { proxyDispatcher } from './proxy-dispatcher.js'
import type { ProxyResolver } from './proxy-resolver.js'
import { ProxyTunnelError } from './proxy-tunnel-connector.js'

const pki = makeTestPki()

interface Seen {
  readonly url: string | undefined
  readonly headers: IncomingHttpHeaders
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

describe('proxyDispatcher', () => {
  const seen: Seen[] = []
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    seen.push({ url: req.url, headers: req.headers })
    res.end('ok')
  }
  const httpsServer = createHttpsServer({ cert: pki.serverCert, key: pki.serverKey }, handler)
  const httpServer = createHttpServer(handler)
  let httpsPort = 0
  let httpPort = 0
  let proxy: ForwardProxy

  before(async () => {
    httpsPort = await listen(httpsServer)
    httpPort = await listen(httpServer)
    proxy = await startForwardProxy({ hosts: ['hooks.proxied.test'] })
  })
  after(async () => {
    await proxy.close()
    httpsServer.close()
    httpServer.close()
  })

  const through =
    (url: string): ProxyResolver =>
    () =>
      new URL(url)
  const dispatcherWith = (resolve: ProxyResolver): ReturnType<typeof proxyDispatcher> =>
    proxyDispatcher({ connect: buildConnector({ ca: pki.caCert }), resolve })

  it('tunnels an https target through CONNECT, verifies the target with its CA, keeps the tunnel alive', async () => {
    const before = proxy.connects()
    const dispatcher = dispatcherWith(through(proxy.url))
    try {
      for (let i = 0; i < 6; i++) {
        const response = await request(`https://127.0.0.1:${httpsPort}/api?i=${i}`, {
          method: 'GET',
          dispatcher,
        })
        assert.equal(await response.body.text(), 'ok')
      }
    } finally {
      await dispatcher.close()
    }
    // undici may open a second socket when a request goes out in the tick its predecessor's
    // response ends (see KubeTransport); pooling still keeps tunnels far below requests.
    assert.ok(proxy.connects() - before <= 2, `${proxy.connects() - before} tunnels for 6 requests`)
    assert.equal(proxy.requests.at(-1)?.target, `127.0.0.1:${httpsPort}`)
    assert.equal(seen.at(-1)?.url, '/api?i=5')
  })

  it('sends an http target to the proxy in absolute form, with the target as Host', async () => {
    const dispatcher = dispatcherWith(through(proxy.url))
    try {
      const response = await request(`http://hooks.proxied.test:${httpPort}/sync?x=1`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
        dispatcher,
      })
      assert.equal(await response.body.text(), 'ok')
    } finally {
      await dispatcher.close()
    }
    const last = proxy.requests.at(-1)
    assert.equal(last?.kind, 'http')
    assert.equal(last.target, `http://hooks.proxied.test:${httpPort}/sync?x=1`)
    assert.equal(seen.at(-1)?.headers.host, `hooks.proxied.test:${httpPort}`)
    assert.equal(seen.at(-1)?.headers['proxy-authorization'], undefined)
  })

  it('sends the proxy URL credentials as Basic Proxy-Authorization on both kinds', async () => {
    const expected = `Basic ${Buffer.from('ops:s3cret!').toString('base64')}`
    const guarded = await startForwardProxy({
      requireAuthorization: expected,
      hosts: ['hooks.proxied.test'],
    })
    const withCredentials = guarded.url.replace('http://', 'http://ops:s3cret%21@')
    const dispatcher = dispatcherWith(through(withCredentials))
    try {
      const tls = await request(`https://127.0.0.1:${httpsPort}/`, { method: 'GET', dispatcher })
      assert.equal(await tls.body.text(), 'ok')
      const plain = await request(`http://hooks.proxied.test:${httpPort}/`, {
        method: 'GET',
        dispatcher,
      })
      assert.equal(await plain.body.text(), 'ok')
    } finally {
      await dispatcher.close()
      await guarded.close()
    }
    assert.deepEqual(
      guarded.requests.map((r) => [r.kind, r.authorization]),
      [
        ['connect', expected],
        ['http', expected],
      ]
    )
  })

  it('fails with the proxy and its answer named when the proxy refuses the tunnel', async () => {
    const guarded = await startForwardProxy({ requireAuthorization: 'Basic nope' })
    const dispatcher = dispatcherWith(through(guarded.url))
    try {
      await assert.rejects(
        request(`https://127.0.0.1:${httpsPort}/`, { method: 'GET', dispatcher }),
        (error: unknown) =>
          error instanceof ProxyTunnelError &&
          error.message ===
            `proxy ${guarded.url}: CONNECT 127.0.0.1:${httpsPort}: 407 Proxy Authentication Required`
      )
    } finally {
      await dispatcher.close()
      await guarded.close()
    }
  })

  it('connects directly when the resolver names no proxy', async () => {
    const before = proxy.requests.length
    const dispatcher = dispatcherWith(() => undefined)
    try {
      const response = await request(`https://127.0.0.1:${httpsPort}/direct`, {
        method: 'GET',
        dispatcher,
      })
      assert.equal(await response.body.text(), 'ok')
    } finally {
      await dispatcher.close()
    }
    assert.equal(proxy.requests.length, before)
    assert.equal(seen.at(-1)?.url, '/direct')
  })
})
