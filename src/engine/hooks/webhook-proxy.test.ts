// A hook call through a forward proxy, as the engine's hook agents make it: an https hook through
// a CONNECT tunnel with the hook's own CA and the connection phases traced, an http hook in
// absolute form.
import assert from 'node:assert/strict'
import { createServer as createHttpServer } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'

import { startForwardProxy } from '../../../test/support/forward-proxy.js'
import type { ForwardProxy } from '../../../test/support/forward-proxy.js'
import { makeTestPki } from '../../../test/support/test-pki.js'
import { proxyDispatcher } from '../../kube/proxy/proxy-dispatcher.js'
import { environmentProxyResolver, proxyEnvironmentFrom } from '../../kube/proxy/proxy-resolver.js'
import type { ProxyResolver } from '../../kube/proxy/proxy-resolver.js'
import type { ConnectPhase } from '../metrics/hook-metrics.js'
import { postWebhook } from './post-webhook.js'
import { tracedConnector } from './traced-connector.js'

const pki = makeTestPki()

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

describe('webhook calls through a proxy', () => {
  const answer = (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"children":[]}')
  }
  const httpsHook = createHttpsServer({ cert: pki.serverCert, key: pki.serverKey }, answer)
  const httpHook = createHttpServer(answer)
  let httpsPort = 0
  let httpPort = 0
  let proxy: ForwardProxy

  before(async () => {
    httpsPort = await listen(httpsHook)
    httpPort = await listen(httpHook)
    proxy = await startForwardProxy({ hosts: ['hooks.example.test'] })
  })
  after(async () => {
    await proxy.close()
    httpsHook.close()
    httpHook.close()
  })

  async function call(
    url: string,
    resolve: ProxyResolver,
    phases: ConnectPhase[]
  ): Promise<string> {
    const dispatcher = proxyDispatcher({
      connect: tracedConnector({
        tls: { ca: pki.caCert },
        onPhase: (phase) => phases.push(phase),
      }),
      resolve,
    })
    try {
      return (await postWebhook(url, { parent: {} }, { timeoutMs: 10_000, dispatcher })).body
    } finally {
      await dispatcher.close()
    }
  }

  it('tunnels an https hook with its CA, tracing the target’s TLS handshake', async () => {
    const phases: ConnectPhase[] = []
    const before = proxy.connects()
    // A fixed resolver: an environment proxy would exempt the loopback hook.
    const body = await call(`https://127.0.0.1:${httpsPort}/sync`, () => new URL(proxy.url), phases)
    assert.equal(body, '{"children":[]}')
    assert.equal(proxy.connects() - before, 1)
    assert.deepEqual(phases, ['tls_handshake_start', 'tls_handshake_done'])
  })

  it('sends an http hook through HTTP_PROXY unless NO_PROXY names it', async () => {
    const resolve = environmentProxyResolver(
      proxyEnvironmentFrom({ HTTP_PROXY: proxy.url, NO_PROXY: 'direct.example.test' })
    )
    assert.ok(resolve !== undefined)
    const before = proxy.plainRequests()
    const url = `http://hooks.example.test:${httpPort}/sync`
    assert.equal(await call(url, resolve, []), '{"children":[]}')
    assert.equal(proxy.plainRequests() - before, 1)
    assert.equal(proxy.requests.at(-1)?.target, url)
  })
})
