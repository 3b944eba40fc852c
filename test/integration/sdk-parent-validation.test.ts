// The webhook server's optional parent validation, over real HTTP on loopback: with the CRD
// given as parentCrd, a parent that does not match its schema (no spec, a wrong type) is
// answered 422 with the bad field's path and the hook is never called.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { request } from 'undici'
import { defineCompositeHook, serveHooks } from 'metacontroller-ts'
import type { HookServer, KubeObject } from 'metacontroller-ts'
import { readManifestFile } from 'metacontroller-ts/testing'

interface Parent extends KubeObject {
  spec: { image: string }
}

describe('serveHooks parentCrd', () => {
  let server: HookServer
  let calls = 0
  const [crd] = readManifestFile('examples/podservice/crd.yaml')
  // A hook that trusts its types, as a typed spec invites: without validation a parent with no
  // spec makes it throw a TypeError.
  const sync = defineCompositeHook<Parent>(({ parent }) => {
    calls++
    return { status: { image: parent.spec.image.toUpperCase() } }
  })

  before(async () => {
    server = await serveHooks({ '/sync': sync }, { port: 0, parentCrd: crd, log: () => undefined })
  })
  after(async () => {
    await server.close()
  })

  const post = (parent: unknown) =>
    request(`${server.url}/sync`, {
      method: 'POST',
      body: JSON.stringify({ parent, children: {} }),
      headers: { 'content-type': 'application/json' },
    })
  const parent = (spec?: unknown): unknown => ({
    apiVersion: 'homelabz.com.br/v1',
    kind: 'PodService',
    metadata: { name: 'web', namespace: 'ns' },
    ...(spec === undefined ? {} : { spec }),
  })

  it('answers 422 naming spec for a parent without spec, without calling the hook', async () => {
    calls = 0
    const res = await post(parent())
    assert.equal(res.statusCode, 422)
    const body = (await res.body.json()) as { error: string; field: string }
    assert.equal(body.field, 'spec')
    assert.match(
      body.error,
      /PodService ns\/web does not match its CRD schema: spec: Required value/
    )
    assert.equal(calls, 0)
  })

  it('answers 422 with the path of a field of the wrong type', async () => {
    const res = await post(parent({ image: 'nginx', port: 'eighty' }))
    assert.equal(res.statusCode, 422)
    assert.equal(((await res.body.json()) as { field: string }).field, 'spec.port')
  })

  it('calls the hook for a valid parent', async () => {
    const res = await post(parent({ image: 'nginx' }))
    assert.equal(res.statusCode, 200)
    assert.deepEqual(await res.body.json(), { status: { image: 'NGINX' } })
  })

  it('without parentCrd the same request is the hook’s TypeError, a 500', async () => {
    const plain = await serveHooks({ '/sync': sync }, { port: 0, log: () => undefined })
    try {
      const res = await request(`${plain.url}/sync`, {
        method: 'POST',
        body: JSON.stringify({ parent: parent(), children: {} }),
        headers: { 'content-type': 'application/json' },
      })
      assert.equal(res.statusCode, 500)
      assert.match(((await res.body.json()) as { error: string }).error, /TypeError|undefined/)
    } finally {
      await plain.close()
    }
  })
})
