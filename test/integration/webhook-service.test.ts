// A webhook addressed by `service` (spec §1.1): the URL is built as upstream builds it,
// `{protocol}://{name}.{namespace}:{port}{path}`, and an engine outside the cluster reaches it
// through its `hookAddresses` option (`metactl run --hook-address`), the URL — and so the metrics'
// `url` label and the Host header — staying the in-cluster one.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import { EngineFixture, isolatedComposite, serveHook } from '../support/engine-fixture.js'
import type { ServedHook } from '../support/engine-fixture.js'

const { parentCrd, childCrd, parentObject, ccSpec } = isolatedComposite('SvcParent', 'SvcChild')

describe('webhook by service', () => {
  let fx: EngineFixture
  let hook: ServedHook

  before(async () => {
    hook = await serveHook((body) => {
      const name = (body as { parent: KubeObject }).parent.metadata.name ?? ''
      return {
        children: [
          {
            apiVersion: childCrd.apiVersion,
            kind: 'SvcChild',
            metadata: { name, labels: { app: name } },
          },
        ],
      }
    })
    const port = Number(new URL(hook.url).port)
    fx = await EngineFixture.start({
      // Service `sync-hooks` in namespace `hooks-ns`, port 80 by default, as the cluster would route.
      hookAddresses: new Map([['sync-hooks.hooks-ns:80', { host: '127.0.0.1', port }]]),
    })
    fx.onTeardown(() => hook.close())
    await fx.crds(parentCrd.crd, childCrd.crd)
  })

  after(async () => {
    await fx.stop()
  })

  it('calls http://name.namespace:80/path for a service without port or protocol', async () => {
    const ns = await fx.namespace()
    await fx.compositeController(`svc-${ns}`, {
      ...ccSpec('', ns),
      hooks: {
        sync: {
          webhook: { service: { name: 'sync-hooks', namespace: 'hooks-ns' }, path: '/sync' },
        },
      },
    })
    await fx.client.create(parentCrd.ref, parentObject('s', ns))
    await fx.waitForObject(childCrd.ref, 's', ns)
    assert.ok(hook.requests.length > 0)
    const text = await fx.engine.metrics.render()
    assert.match(
      text,
      new RegExp(
        `^metacontroller_sync_requests_total\\{url="http://sync-hooks\\.hooks-ns:80/sync",` +
          `controller_name="svc-${ns}",controller_type="CompositeController",code="200",method="post"\\} [1-9]`,
        'm'
      )
    )
  })
})
