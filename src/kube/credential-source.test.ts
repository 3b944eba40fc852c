import assert from 'node:assert/strict'
import { describe, it } from 'node:test'

import type { AuthConfig, ClusterConfig } from './cluster-config.js'
import { createCredentialSource } from './credential-source.js'
import { ExecCredentials } from './exec-credentials.js'
import { StaticCredentials } from './static-credentials.js'
import { TokenFileCredentials } from './token-file-credentials.js'

function config(auth: AuthConfig): ClusterConfig {
  return { server: 'https://c', auth, namespace: 'default', source: 'test' }
}

describe('createCredentialSource', () => {
  it('sends nothing for auth none', async () => {
    const source = createCredentialSource(config({ type: 'none' }))
    assert.ok(source instanceof StaticCredentials)
    assert.deepEqual(await source.current(), {})
  })

  it('sends a static bearer token that invalidate does not drop', async () => {
    const source = createCredentialSource(config({ type: 'token', token: 'abc' }))
    source.invalidate()
    assert.deepEqual(await source.current(), { authorization: 'Bearer abc' })
  })

  it('encodes basic auth as UTF-8 base64', async () => {
    const source = createCredentialSource(
      config({ type: 'basic', username: 'admin', password: 'pässword' })
    )
    const expected = Buffer.from('admin:pässword', 'utf8').toString('base64')
    assert.deepEqual(await source.current(), { authorization: `Basic ${expected}` })
  })

  it('reads a token file through the injected reader', async () => {
    const source = createCredentialSource(config({ type: 'tokenFile', path: '/sa/token' }), {
      readFile: (path) => Promise.resolve(path === '/sa/token' ? 'from-file\n' : ''),
    })
    assert.ok(source instanceof TokenFileCredentials)
    assert.deepEqual(await source.current(), { authorization: 'Bearer from-file' })
  })

  it('builds an exec source for exec auth', () => {
    const source = createCredentialSource(
      config({
        type: 'exec',
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: 'true',
          args: [],
          env: [],
          provideClusterInfo: true,
        },
      })
    )
    assert.ok(source instanceof ExecCredentials)
  })
})
