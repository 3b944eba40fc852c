import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ControllerSpecError } from './controller-spec-error.js'
import { parseWebhook } from './controller-spec-fields.js'
import { parseEndpointConfigs, parseEtag } from './webhook-security-spec.js'

const URL = 'https://hook.example/sync'

function fails(run: () => unknown, message: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof ControllerSpecError, String(error))
    assert.match(error.message, message)
    return true
  })
}

describe('webhook TLS and auth fields', () => {
  it('applies upstream key defaults to secretRef, configMapRef, clientTLS and basicAuth', () => {
    const secretCa = parseWebhook(
      {
        url: URL,
        caBundle: { secretRef: { name: 'ca', namespace: 'ns' } },
        clientTLS: { secretRef: { name: 'tls', namespace: 'ns' } },
        basicAuth: { secretRef: { name: 'basic', namespace: 'ns' } },
      },
      'w'
    )
    assert.deepEqual(secretCa?.security, {
      caBundle: { source: 'secret', namespace: 'ns', name: 'ca', key: 'ca.crt' },
      clientTLS: { namespace: 'ns', name: 'tls', certKey: 'tls.crt', privateKeyKey: 'tls.key' },
      basicAuth: {
        namespace: 'ns',
        name: 'basic',
        usernameKey: 'username',
        passwordKey: 'password',
      },
    })
    const configMapCa = parseWebhook(
      { url: URL, caBundle: { configMapRef: { name: 'ca', namespace: 'ns', key: 'bundle' } } },
      'w'
    )
    assert.deepEqual(configMapCa?.security?.caBundle, {
      source: 'configMap',
      namespace: 'ns',
      name: 'ca',
      key: 'bundle',
    })
  })

  it('trims the authorization type, defaults it to Bearer and refuses Basic', () => {
    const ref = { name: 't', namespace: 'ns', key: 'token' }
    const bearer = parseWebhook({ url: URL, authorization: { type: '  ', secretRef: ref } }, 'w')
    assert.equal(bearer?.security?.authorization?.type, 'Bearer')
    const custom = parseWebhook(
      { url: URL, authorization: { type: ' Token ', secretRef: ref } },
      'w'
    )
    assert.equal(custom?.security?.authorization?.type, 'Token')
    fails(
      () => parseWebhook({ url: URL, authorization: { type: 'BASIC', secretRef: ref } }, 'w'),
      /use basicAuth/
    )
    fails(
      () =>
        parseWebhook(
          { url: URL, authorization: { secretRef: { name: 't', namespace: 'n' } } },
          'w'
        ),
      /w\.authorization\.secretRef\.key/
    )
  })

  it('refuses zero or several CA sources, and authorization with basicAuth', () => {
    fails(() => parseWebhook({ url: URL, caBundle: {} }, 'w'), /exactly one of inline/)
    fails(
      () =>
        parseWebhook(
          { url: URL, caBundle: { inline: 'x', secretRef: { name: 'a', namespace: 'b' } } },
          'w'
        ),
      /exactly one of inline/
    )
    fails(
      () =>
        parseWebhook(
          {
            url: URL,
            authorization: { secretRef: { name: 't', namespace: 'n', key: 'k' } },
            basicAuth: { secretRef: { name: 'b', namespace: 'n' } },
          },
          'w'
        ),
      /authorization and basicAuth cannot both be set/
    )
  })

  it('has no security for a webhook that sets none', () => {
    assert.equal(parseWebhook({ url: URL }, 'w')?.security, undefined)
  })

  it('parses endpointConfigs, each with a host', () => {
    assert.deepEqual(parseEndpointConfigs(undefined, 'e'), [])
    assert.deepEqual(
      parseEndpointConfigs(
        [{ host: 'a:443', caBundle: { inline: 'pem' } }],
        'spec.endpointConfigs'
      ),
      [{ host: 'a:443', caBundle: { source: 'inline', pem: 'pem' } }]
    )
    fails(() => parseEndpointConfigs([{}], 'spec.endpointConfigs'), /endpointConfigs\[0\]\.host/)
  })
})

describe('webhook.etag', () => {
  it('is off unless enabled', () => {
    assert.equal(parseEtag(undefined, 'e'), undefined)
    assert.equal(parseEtag({ enabled: false, cacheTimeoutSeconds: 5 }, 'e'), undefined)
  })

  it('reads the timeout and cleanup, 0 meaning never expire', () => {
    assert.deepEqual(parseEtag({ enabled: true }, 'e'), {
      enabled: true,
      cacheTimeoutMs: undefined,
      cacheCleanupMs: undefined,
    })
    assert.deepEqual(
      parseEtag({ enabled: true, cacheTimeoutSeconds: 0, cacheCleanupSeconds: 9 }, 'e'),
      {
        enabled: true,
        cacheTimeoutMs: undefined,
        cacheCleanupMs: undefined,
      }
    )
    assert.deepEqual(
      parseEtag({ enabled: true, cacheTimeoutSeconds: 60, cacheCleanupSeconds: 5 }, 'e'),
      {
        enabled: true,
        cacheTimeoutMs: 60_000,
        cacheCleanupMs: 5_000,
      }
    )
  })

  it('cleans up once per timeout when no cleanup period is set (upstream crashes)', () => {
    assert.equal(parseEtag({ enabled: true, cacheTimeoutSeconds: 30 }, 'e')?.cacheCleanupMs, 30_000)
  })

  it('refuses negative or fractional seconds', () => {
    fails(() => parseEtag({ enabled: true, cacheTimeoutSeconds: -1 }, 'e'), /cacheTimeoutSeconds/)
    fails(() => parseEtag({ enabled: true, cacheCleanupSeconds: 1.5 }, 'e'), /cacheCleanupSeconds/)
  })
})
