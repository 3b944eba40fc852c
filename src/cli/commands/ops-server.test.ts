import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseListenAddress } from './ops-server.js'

describe('parseListenAddress', () => {
  it('listens on every IPv4 interface for :port', () => {
    assert.deepEqual(parseListenAddress(':9999'), { host: '0.0.0.0', port: 9999 })
  })

  it('reads host:port', () => {
    assert.deepEqual(parseListenAddress('127.0.0.1:9999'), { host: '127.0.0.1', port: 9999 })
    assert.deepEqual(parseListenAddress('localhost:8080'), { host: 'localhost', port: 8080 })
  })

  it('reads a bracketed IPv6 host without the brackets', () => {
    assert.deepEqual(parseListenAddress('[::1]:9999'), { host: '::1', port: 9999 })
    assert.deepEqual(parseListenAddress('[::]:80'), { host: '::', port: 80 })
  })

  it('accepts port 0 (any free port) and the highest port', () => {
    assert.deepEqual(parseListenAddress(':0'), { host: '0.0.0.0', port: 0 })
    assert.deepEqual(parseListenAddress(':65535'), { host: '0.0.0.0', port: 65535 })
  })

  it('disables the server for 0 and for the empty string', () => {
    assert.equal(parseListenAddress('0'), undefined)
    assert.equal(parseListenAddress(''), undefined)
  })

  it('throws for an address it cannot read', () => {
    for (const text of [
      '9999',
      'localhost',
      ':',
      ':port',
      ':-1',
      '::1:9999',
      '[::1]9999',
      '[::1]',
      '127.0.0.1:99a',
    ]) {
      assert.throws(() => parseListenAddress(text), /invalid listen address/, JSON.stringify(text))
    }
  })

  it('throws for a port above 65535', () => {
    assert.throws(() => parseListenAddress(':65536'), /invalid port in ":65536"/)
    assert.throws(() => parseListenAddress('[::1]:100000'), /invalid port/)
  })
})
