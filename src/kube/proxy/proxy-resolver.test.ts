import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import {
  ProxyConfigError,
  environmentProxyResolver,
  parseProxyUrl,
  proxyEnvironmentFrom,
} from './proxy-resolver.js'

function resolverOf(env: NodeJS.ProcessEnv): (url: string) => string | undefined {
  const resolve = environmentProxyResolver(proxyEnvironmentFrom(env))
  return (url) => resolve?.(new URL(url))?.href
}

describe('proxyEnvironmentFrom', () => {
  it('prefers the upper-case variable and falls back to the lower-case one', () => {
    const env = proxyEnvironmentFrom({
      HTTPS_PROXY: 'http://upper:1',
      https_proxy: 'http://lower:1',
      http_proxy: 'http://lower:2',
      no_proxy: 'svc',
    })
    assert.equal(env.httpsProxy, 'http://upper:1')
    assert.equal(env.httpProxy, 'http://lower:2')
    assert.equal(env.noProxy, 'svc')
    assert.equal(env.cgi, false)
  })

  it('treats an empty upper-case variable as unset', () => {
    assert.equal(proxyEnvironmentFrom({ HTTP_PROXY: '', http_proxy: 'p:1' }).httpProxy, 'p:1')
  })
})

describe('environmentProxyResolver', () => {
  it('is undefined when no proxy variable is set, NO_PROXY alone included', () => {
    assert.equal(environmentProxyResolver(proxyEnvironmentFrom({ NO_PROXY: '*' })), undefined)
  })

  it('picks the proxy by the request scheme', () => {
    const resolve = resolverOf({ HTTP_PROXY: 'http://p1:3128', HTTPS_PROXY: 'https://p2:3129' })
    assert.equal(resolve('http://hooks.example/sync'), 'http://p1:3128/')
    assert.equal(resolve('https://api.example:6443/api'), 'https://p2:3129/')
  })

  it('does not use HTTP_PROXY for https requests (Go falls back to none)', () => {
    assert.equal(resolverOf({ HTTP_PROXY: 'http://p:1' })('https://api.example/'), undefined)
  })

  it('exempts loopback and NO_PROXY matches, by the default port of the scheme', () => {
    const resolve = resolverOf({ HTTPS_PROXY: 'http://p:1', NO_PROXY: 'svc:443,10.0.0.0/8' })
    assert.equal(resolve('https://127.0.0.1:6443/'), undefined)
    assert.equal(resolve('https://localhost/'), undefined)
    assert.equal(resolve('https://kubernetes.default.svc/'), undefined)
    assert.equal(resolve('https://kubernetes.default.svc:8443/'), 'http://p:1/')
    assert.equal(resolve('https://10.96.0.1/'), undefined)
    assert.equal(resolve('https://example.com/'), 'http://p:1/')
  })

  it('refuses HTTP_PROXY for http requests in a CGI environment, as Go does', () => {
    const resolve = environmentProxyResolver(
      proxyEnvironmentFrom({ HTTP_PROXY: 'http://p:1', REQUEST_METHOD: 'GET' })
    )
    assert.throws(() => resolve?.(new URL('http://example.com/')), ProxyConfigError)
  })

  it('fails at once on a proxy variable it cannot use, naming it', () => {
    assert.throws(
      () => environmentProxyResolver(proxyEnvironmentFrom({ HTTPS_PROXY: 'socks5://p:1080' })),
      /HTTPS_PROXY "socks5:\/\/p:1080": SOCKS5 proxies are not supported/
    )
  })
})

describe('parseProxyUrl', () => {
  it('reads a value without a scheme as http://, as Go does', () => {
    assert.equal(parseProxyUrl('proxy.corp:3128', 'HTTP_PROXY').href, 'http://proxy.corp:3128/')
    assert.equal(parseProxyUrl('10.0.0.1:3128', 'HTTP_PROXY').href, 'http://10.0.0.1:3128/')
  })

  it('keeps credentials and an https scheme', () => {
    const url = parseProxyUrl('https://user:p%40ss@proxy:443', 'proxy-url')
    assert.equal(url.protocol, 'https:')
    assert.equal(url.username, 'user')
    assert.equal(url.password, 'p%40ss')
  })

  it('refuses other schemes with the setting named', () => {
    assert.throws(
      () => parseProxyUrl('ftp://proxy:21', 'proxy-url'),
      /proxy-url "ftp:\/\/proxy:21": scheme ftp is not supported/
    )
  })
})
