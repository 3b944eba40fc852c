import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import type { EndpointConfigSpec } from '../../api/webhook-security-spec.js'
import { matchEndpointConfig, resolveWebhookTransport } from './webhook-credentials.js'
import type { CredentialReader } from './webhook-credentials.js'

const config = (host: string): EndpointConfigSpec => ({
  host,
  caBundle: { source: 'inline', pem: host },
})

function reader(objects: Record<string, KubeObject>): CredentialReader {
  return {
    read: (kind, namespace, name) => Promise.resolve(objects[`${kind}/${namespace}/${name}`]),
  }
}

function secret(data: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's' },
    data: Object.fromEntries(
      Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])
    ),
  }
}

describe('matchEndpointConfig', () => {
  it('matches host[:port] as written, case-insensitively', () => {
    assert.equal(
      matchEndpointConfig('http://Hook.NS:8080/x', [config('hook.ns:8080')])?.host,
      'hook.ns:8080'
    )
    assert.equal(matchEndpointConfig('http://hook.ns:8080/x', [config('hook.ns')]), undefined)
  })

  it('matches hostname:<default port> when the URL has no port', () => {
    assert.equal(
      matchEndpointConfig('https://h.example/x', [config('h.example:443')])?.host,
      'h.example:443'
    )
    assert.equal(
      matchEndpointConfig('http://h.example/x', [config('h.example:80')])?.host,
      'h.example:80'
    )
    assert.equal(matchEndpointConfig('https://h.example/x', [config('h.example:80')]), undefined)
  })

  it('matches the bare hostname when the explicit port is the default', () => {
    assert.equal(
      matchEndpointConfig('https://h.example:443/x', [config('h.example')])?.host,
      'h.example'
    )
    assert.equal(
      matchEndpointConfig('http://h.example:80/x', [config('h.example')])?.host,
      'h.example'
    )
  })

  it('takes the first match', () => {
    const found = matchEndpointConfig('https://h/x', [
      config('other'),
      config('h'),
      config('H:443'),
    ])
    assert.equal(found?.host, 'h')
  })
})

describe('resolveWebhookTransport', () => {
  const webhook = { url: 'https://h/x', timeoutMs: 1000, decodeMode: undefined }

  it('builds a trimmed bearer header from a Secret key', async () => {
    const resolved = await resolveWebhookTransport(
      {
        ...webhook,
        security: {
          authorization: { type: 'Bearer', secret: { namespace: 'n', name: 's', key: 't' } },
        },
      },
      undefined,
      reader({ 'Secret/n/s': secret({ t: ' abc\n' }) })
    )
    assert.deepEqual(resolved, { headers: { authorization: 'Bearer abc' } })
  })

  it('builds a basic header and refuses a username with a colon', async () => {
    const basic = { namespace: 'n', name: 's', usernameKey: 'u', passwordKey: 'p' }
    const ok = await resolveWebhookTransport(
      { ...webhook, security: { basicAuth: basic } },
      undefined,
      reader({ 'Secret/n/s': secret({ u: 'me', p: 'pw ' }) })
    )
    assert.deepEqual(ok.headers, {
      authorization: `Basic ${Buffer.from('me:pw').toString('base64')}`,
    })
    await assert.rejects(
      resolveWebhookTransport(
        { ...webhook, security: { basicAuth: basic } },
        undefined,
        reader({ 'Secret/n/s': secret({ u: 'a:b', p: 'pw' }) })
      ),
      /webhook https:\/\/h\/x: basicAuth Secret n\/s: the username must not contain ":"/
    )
  })

  it('names a missing Secret, a missing key and a PEM without certificates', async () => {
    const auth = { type: 'Bearer', secret: { namespace: 'n', name: 's', key: 't' } }
    await assert.rejects(
      resolveWebhookTransport(
        { ...webhook, security: { authorization: auth } },
        undefined,
        reader({})
      ),
      /Secret n\/s not found/
    )
    await assert.rejects(
      resolveWebhookTransport(
        { ...webhook, security: { authorization: auth } },
        undefined,
        reader({ 'Secret/n/s': secret({ other: 'x' }) })
      ),
      /has no key "t"/
    )
    await assert.rejects(
      resolveWebhookTransport({ ...webhook }, [config('h:443')], reader({})),
      /caBundle: no valid PEM-encoded certificates/
    )
  })

  it("uses only the webhook's own settings when it sets any (no merge with endpointConfigs)", async () => {
    const own = {
      authorization: { type: 'Token', secret: { namespace: 'n', name: 's', key: 't' } },
    }
    const resolved = await resolveWebhookTransport(
      { ...webhook, security: own },
      [config('h:443')],
      reader({ 'Secret/n/s': secret({ t: 'x' }) })
    )
    assert.deepEqual(resolved, { headers: { authorization: 'Token x' } })
  })
})
