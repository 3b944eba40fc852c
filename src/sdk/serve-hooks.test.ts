import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { hookCodec } from '../api/wire/codecs.js'
import type { KubeObject } from '../core/kube-object.js'
import { defineDecoratorHook } from './hook-types.js'
import { serveHooks } from './serve-hooks.js'
import type { HookServer } from './serve-hooks.js'

const object: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'Thing',
  metadata: { name: 'a', namespace: 'ns', uid: 'u1' },
}

describe('serveHooks with a decorator hook', () => {
  let server: HookServer

  before(async () => {
    const sync = defineDecoratorHook(({ object: target }) => ({
      labels: { decorated: 'true' },
      annotations: { target: target.metadata.name ?? '' },
      attachments: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: target.metadata.name ?? '' } },
      ],
    }))
    server = await serveHooks({ '/decorate': sync }, { port: 0, log: () => undefined })
  })

  after(async () => {
    await server.close()
  })

  it('answers the v2 request the engine sends with a body the engine decodes strictly', async () => {
    const body = JSON.stringify(
      hookCodec('v2').encodeDecoratorSync({
        controller: {
          apiVersion: 'metacontroller.k8s.io/v1alpha1',
          kind: 'DecoratorController',
          metadata: { name: 'd' },
        },
        object,
        attachments: new Map([['ConfigMap.v1', new Map()]]),
        related: new Map(),
        finalizing: false,
      })
    )
    const res = await fetch(`${server.url}/decorate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    assert.equal(res.status, 200)
    const decoded = hookCodec('v2').decodeDecoratorSync(await res.text(), { mode: 'strict' })
    assert.deepEqual(decoded.response, {
      labels: { decorated: 'true' },
      annotations: { target: 'a' },
      status: null,
      attachments: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }],
      resyncAfterMs: 0,
      finalized: false,
    })
  })
})
