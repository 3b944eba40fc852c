import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { formatEndpoint, parseEndpoint, startForwarder } from './stream-forwarder.js'
import { loaderFlags } from './forwarder-command.js'

describe('stream forwarder', () => {
  it('parses and formats both endpoint forms, and names them when neither matches', () => {
    for (const text of ['tcp:127.0.0.1:6443', 'unix:/tmp/x.sock']) {
      assert.equal(formatEndpoint(parseEndpoint(text)), text)
    }
    assert.throws(() => parseEndpoint('127.0.0.1:6443'), /tcp:HOST:PORT nor unix:PATH/)
  })

  it('carries bytes both ways from a TCP port through a unix socket to a TCP server', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'metactl-fwd-'))
    const echo = createServer((socket) => socket.pipe(socket))
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve))
    const echoPort = (echo.address() as AddressInfo).port
    const sock = join(dir, 'a.sock')
    const inner = await startForwarder(parseEndpoint(`unix:${sock}`), {
      kind: 'tcp',
      host: '127.0.0.1',
      port: echoPort,
    })
    const outer = await startForwarder(
      { kind: 'tcp', host: '127.0.0.1', port: 0 },
      {
        kind: 'unix',
        path: sock,
      }
    )
    try {
      const port = (outer.address() as AddressInfo).port
      const reply = await new Promise<string>((resolve, reject) => {
        const client = connect(port, '127.0.0.1', () => {
          client.end('ping')
        })
        let data = ''
        client.on('data', (chunk: Buffer) => {
          data += chunk.toString()
        })
        client.on('end', () => {
          resolve(data)
        })
        client.on('error', reject)
      })
      assert.equal(reply, 'ping')
    } finally {
      outer.close()
      inner.close()
      echo.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('passes the module loader flags on to a child and drops the test runner ones', () => {
    assert.deepEqual(loaderFlags(['--import', 'tsx', '--test', '--test-reporter=spec']), [
      '--import',
      'tsx',
    ])
    assert.deepEqual(loaderFlags(['--import=tsx', '--expose-gc']), ['--import=tsx'])
  })
})
