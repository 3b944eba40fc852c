// A parent CRD deleted and created again with the same name while the engine runs (upstream's
// integration suite does this between tests): the CompositeController keeps serving, now the new
// CRD's parents, within the discovery interval, without a restart of the engine or a change to the
// controller.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import { CRD_RESOURCE, waitFor } from '../../src/testing/index.js'
import { EngineFixture, testCrd } from '../support/engine-fixture.js'

const DISCOVERY_INTERVAL_MS = 2_000

describe('CRD churn under a running engine', () => {
  let fx: EngineFixture
  // A kind of this run's own: its CRD is deleted, which no other test may see.
  const kind = `Churn${randomBytes(3).toString('hex')}`
  const parentCrd = testCrd(kind)
  const childCrd = testCrd('ChurnChild')

  before(async () => {
    fx = await EngineFixture.start({ discoveryIntervalMs: DISCOVERY_INTERVAL_MS })
  })

  after(async () => {
    await fx.stop()
    await fx.client.delete(CRD_RESOURCE, parentCrd.crd.metadata.name ?? '').catch(() => undefined)
  })

  it('serves the re-created CRD within the discovery interval', async () => {
    const ns = await fx.namespace('churn')
    await fx.crds(parentCrd.crd, childCrd.crd)
    const hook = await fx.hook((body) => {
      const name = (body as { parent: KubeObject }).parent.metadata.name ?? ''
      return {
        children: [{ apiVersion: childCrd.apiVersion, kind: 'ChurnChild', metadata: { name } }],
      }
    })
    await fx.compositeController(`churn-${kind.toLowerCase()}`, {
      generateSelector: true,
      parentResource: { apiVersion: parentCrd.apiVersion, resource: parentCrd.ref.resource },
      childResources: [{ apiVersion: childCrd.apiVersion, resource: childCrd.ref.resource }],
      hooks: { sync: { webhook: { url: hook.url } } },
    })
    const parent = (name: string): KubeObject => ({
      apiVersion: parentCrd.apiVersion,
      kind,
      metadata: { name, namespace: ns },
    })
    await fx.client.create(parentCrd.ref, parent('before'))
    await fx.waitForObject(childCrd.ref, 'before', ns)

    const crdName = parentCrd.crd.metadata.name ?? ''
    await fx.client.delete(CRD_RESOURCE, crdName)
    await fx.waitForGone(CRD_RESOURCE, crdName)
    // Long enough for discovery to drop the resource and the parent informer to see it go.
    await new Promise((resolve) => setTimeout(resolve, 2 * DISCOVERY_INTERVAL_MS))
    await fx.crds(parentCrd.crd)
    await fx.client.create(parentCrd.ref, parent('after'))
    const startedMs = Date.now()
    await waitFor(
      () => fx.client.get(childCrd.ref, 'after', { namespace: ns }).catch(() => undefined),
      {
        timeoutMs: 30_000,
        intervalMs: 100,
        description: 'the child of a parent of the re-created CRD',
      }
    )
    const tookMs = Date.now() - startedMs
    assert.ok(fx.engine.runningControllers().includes(`churn-${kind.toLowerCase()}`))
    // Reported, not asserted against a deadline: the bound is the waitFor above.
    process.stdout.write(`# re-created CRD served after ${tookMs} ms\n`)
  })
})
