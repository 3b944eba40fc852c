import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import { parseNoProxy } from './no-proxy-matcher.js'

function bypassed(noProxy: string, host: string, port = '443'): boolean {
  return parseNoProxy(noProxy).bypasses(host, port)
}

describe('parseNoProxy (Go httpproxy semantics)', () => {
  it('never proxies localhost or loopback addresses, whatever the list says', () => {
    for (const host of ['localhost', '127.0.0.1', '127.0.0.2', '127.255.0.9', '::1', '[::1]']) {
      assert.equal(bypassed('', host), true, host)
    }
    assert.equal(bypassed('', '::2'), false)
    assert.equal(bypassed('', 'localhost.net'), false)
    assert.equal(bypassed('', 'local.localhost'), false)
  })

  it('a bare domain matches itself and every subdomain, not a longer name', () => {
    assert.equal(bypassed('foobar.com', 'foobar.com'), true)
    assert.equal(bypassed('foobar.com', 'www.foobar.com'), true)
    assert.equal(bypassed('foobar.com', 'foofoobar.com'), false)
    assert.equal(bypassed('foobar.com', 'foobar.com.evil'), false)
  })

  it('a leading dot or *. matches subdomains only', () => {
    for (const entry of ['.barbaz.net', '*.barbaz.net']) {
      assert.equal(bypassed(entry, 'a.barbaz.net'), true, entry)
      assert.equal(bypassed(entry, 'a.b.barbaz.net'), true, entry)
      assert.equal(bypassed(entry, 'barbaz.net'), false, entry)
      assert.equal(bypassed(entry, 'barbarbaz.net'), false, entry)
    }
  })

  it('entries are trimmed and case-insensitive, empty entries ignored', () => {
    assert.equal(bypassed(' , Example.COM ,, ', 'API.example.com'), true)
    assert.equal(bypassed(',,', 'example.com'), false)
  })

  it('a port restricts an entry to that port', () => {
    assert.equal(bypassed('hooks.svc:8080', 'a.hooks.svc', '8080'), true)
    assert.equal(bypassed('hooks.svc:8080', 'a.hooks.svc', '80'), false)
    assert.equal(bypassed('10.1.2.3:443', '10.1.2.3', '443'), true)
    assert.equal(bypassed('10.1.2.3:443', '10.1.2.3', '80'), false)
    assert.equal(bypassed('[2001:db8::1]:443', '[2001:db8::1]', '443'), true)
    assert.equal(bypassed('[2001:db8::1]:443', '2001:db8::1', '8443'), false)
  })

  it('an address matches that address only, IPv4-mapped IPv6 included', () => {
    assert.equal(bypassed('10.1.2.3', '10.1.2.3'), true)
    assert.equal(bypassed('10.1.2.3', '10.1.2.4'), false)
    assert.equal(bypassed('10.1.2.3', '::ffff:10.1.2.3'), true)
    assert.equal(bypassed('2001:db8::1', '[2001:DB8::1]'), true)
  })

  it('a CIDR matches addresses inside it, never a name', () => {
    const list = '10.0.0.0/8, 192.168.1.7/24, fd00::/8'
    assert.equal(bypassed(list, '10.96.0.1'), true)
    assert.equal(bypassed(list, '11.0.0.1'), false)
    // Host bits in the entry are masked off, as Go's ParseCIDR does.
    assert.equal(bypassed(list, '192.168.1.200'), true)
    assert.equal(bypassed(list, '192.168.2.1'), false)
    assert.equal(bypassed(list, '[fd12::5]'), true)
    assert.equal(bypassed(list, 'fe80::1'), false)
    assert.equal(bypassed('10.0.0.0/8', '10.example.com'), false)
  })

  it('a domain entry never matches an IP literal', () => {
    assert.equal(bypassed('0.0.1', '10.0.0.1'), false)
    assert.equal(bypassed('.1', '10.0.0.1'), false)
  })

  it('* anywhere in the list bypasses everything', () => {
    assert.equal(bypassed('*', 'example.com'), true)
    assert.equal(bypassed('foo.com, *', '10.0.0.1'), true)
    assert.equal(bypassed('*.foo.com', 'bar.com'), false)
  })

  it('internationalized entries match their punycode form', () => {
    assert.equal(bypassed('bücher.de', 'xn--bcher-kva.de'), true)
  })

  it('ignores malformed entries instead of matching everything', () => {
    assert.equal(bypassed(':8080', 'example.com', '8080'), false)
    assert.equal(bypassed('10.0.0.0/99', '10.0.0.1'), false)
  })
})
