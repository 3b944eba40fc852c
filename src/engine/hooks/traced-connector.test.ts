import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { Agent, request } from 'undici'
import type { ConnectPhase } from '../metrics/hook-metrics.js'
import { hookAddressKey, parseHookAddress, tracedConnector } from './traced-connector.js'

describe('tracedConnector', () => {
  const hosts: string[] = []
  const server = createServer((req, res) => {
    hosts.push(req.headers.host ?? '')
    res.end('ok')
  })
  let port = 0
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  after(() => {
    server.close()
  })

  async function get(url: string, phases: ConnectPhase[], addresses = new Map()): Promise<void> {
    const agent = new Agent({
      connect: tracedConnector({ onPhase: (phase) => phases.push(phase), addresses }),
    })
    try {
      const response = await request(url, { dispatcher: agent })
      assert.equal(await response.body.text(), 'ok')
    } finally {
      await agent.close()
    }
  }

  it('reports the DNS phases when a name is resolved, and no TLS phase for http', async () => {
    const phases: ConnectPhase[] = []
    await get(`http://localhost:${port}/`, phases)
    assert.deepEqual(phases, ['dns_start', 'dns_done'])
  })

  it('reports nothing for an IP literal, as Go resolves no name then', async () => {
    const phases: ConnectPhase[] = []
    await get(`http://127.0.0.1:${port}/`, phases)
    assert.deepEqual(phases, [])
  })

  it('sends a mapped host:port to its address, keeping the Host header', async () => {
    const phases: ConnectPhase[] = []
    const addresses = new Map([parseHookAddress(`hooks.example.invalid:80=127.0.0.1:${port}`)])
    await get('http://hooks.example.invalid/sync', phases, addresses)
    assert.equal(hosts.at(-1), 'hooks.example.invalid')
    assert.deepEqual(phases, [], 'an address needs no lookup')
  })
})

describe('parseHookAddress', () => {
  it('reads HOST:PORT=ADDRESS:PORT, with a bracketed IPv6 address', () => {
    assert.deepEqual(parseHookAddress('Hooks.Default:443=127.0.0.1:8443'), [
      'hooks.default:443',
      { host: '127.0.0.1', port: 8443 },
    ])
    assert.deepEqual(parseHookAddress('a.b:80=[::1]:8080'), ['a.b:80', { host: '::1', port: 8080 }])
  })

  it('refuses anything else, naming the form', () => {
    for (const bad of ['hooks:80', 'hooks=127.0.0.1:80', 'hooks:80=127.0.0.1', 'h:0=a:1']) {
      assert.throws(() => parseHookAddress(bad), /HOST:PORT=ADDRESS:PORT/)
    }
  })
})

describe('hookAddressKey', () => {
  it("spells out the scheme's default port", () => {
    assert.equal(hookAddressKey('Svc.NS', '', 'https:'), 'svc.ns:443')
    assert.equal(hookAddressKey('svc.ns', '', 'http:'), 'svc.ns:80')
    assert.equal(hookAddressKey('svc.ns', '8080', 'http:'), 'svc.ns:8080')
  })
})
