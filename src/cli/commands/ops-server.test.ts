import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { request } from 'undici'
import { parseListenAddress, startOpsServer } from './ops-server.js'

describe('/readyz', () => {
  it('lists the reasons and the uncounted notes with ?verbose, the status from the reasons only', async () => {
    let reasons: string[] = []
    const notes = ['pods.v1 not synced: forbidden to list pods cluster-wide (needed by web)']
    const server = await startOpsServer(
      { host: '127.0.0.1', port: 0 },
      { notReady: () => reasons, readyNotes: () => notes }
    )
    const get = async (path: string): Promise<[number, string]> => {
      const response = await request(`http://127.0.0.1:${server.port}${path}`)
      return [response.statusCode, await response.body.text()]
    }
    try {
      assert.deepEqual(await get('/readyz'), [200, 'ok'])
      assert.deepEqual(await get('/readyz?verbose'), [
        200,
        `[!]${notes[0] ?? ''} (not counted)\nreadyz check passed`,
      ])
      reasons = ['webs.v1.example.com not synced']
      assert.deepEqual(await get('/readyz'), [503, 'webs.v1.example.com not synced'])
      const [status, body] = await get('/readyz?verbose=1')
      assert.equal(status, 503)
      assert.match(body, /^\[-\]webs\.v1\.example\.com not synced\n\[!\].*\nreadyz check failed$/)
    } finally {
      await server.close()
    }
  })
})

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
