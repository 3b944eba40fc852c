// The per-controller cap on hook calls (`--hook-max-in-flight`): with more workers than the cap,
// many parents, a customize hook and related objects created while the first syncs are still
// queued (so customize is also called from events, for parents without a cached answer), the
// controller's hook server never sees more requests at once than the cap, and every parent still
// converges. The proof is by counting at the server, not by timing.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import { CONFIGMAPS } from '../../src/kube/well-known-resources.js'
import { waitFor } from '../../src/testing/index.js'
import { EngineFixture, isolatedComposite } from '../support/engine-fixture.js'

const CAP = 2
const WORKERS = 8
const PARENTS = 40
const capped = isolatedComposite('CappedParent', 'CappedChild')

describe('--hook-max-in-flight', () => {
  let fx: EngineFixture

  before(async () => {
    fx = await EngineFixture.start({ workers: WORKERS, hookMaxInFlight: CAP })
    await fx.crds(capped.parentCrd.crd, capped.childCrd.crd)
  })

  after(async () => {
    await fx.stop()
  })

  it('one controller never has more hook requests open than the cap, and every parent converges', async () => {
    const ns = await fx.namespace('cap')
    let inFlight = 0
    let maxInFlight = 0
    const calls = { sync: 0, customize: 0 }
    const hook = await fx.hook(async (body) => {
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      try {
        // Long enough that calls overlap whenever the engine lets them.
        await new Promise((resolve) => setTimeout(resolve, 25))
        const request = body as { parent: KubeObject; children?: unknown }
        if (request.children === undefined) {
          calls.customize++
          return {
            relatedResources: [
              {
                apiVersion: 'v1',
                resource: 'configmaps',
                labelSelector: { matchLabels: { related: ns } },
              },
            ],
          }
        }
        calls.sync++
        const name = request.parent.metadata.name ?? ''
        return {
          children: [
            {
              apiVersion: capped.childCrd.apiVersion,
              kind: 'CappedChild',
              metadata: { name, labels: { app: name } },
            },
          ],
        }
      } finally {
        inFlight--
      }
    })
    await fx.compositeController(`capped-${ns}`, {
      ...capped.ccSpec(hook.url, ns),
      hooks: { sync: { webhook: { url: hook.url } }, customize: { webhook: { url: hook.url } } },
    })
    const names = Array.from({ length: PARENTS }, (_, i) => `p${i}`)
    await Promise.all(
      names.map((name) => fx.client.create(capped.parentCrd.ref, capped.parentObject(name, ns)))
    )
    // Related objects while most parents have no customize answer yet: each event calls
    // customize for every such parent at once, on top of the workers' own calls.
    for (const i of [1, 2, 3]) {
      await fx.client.create(CONFIGMAPS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `related-${i}`, namespace: ns, labels: { related: ns } },
        data: {},
      })
    }
    await waitFor(
      async () =>
        (await fx.client.list(capped.childCrd.ref, { namespace: ns })).items.length === PARENTS,
      { timeoutMs: 60_000, intervalMs: 250, description: `${PARENTS} children` }
    )
    assert.ok(calls.customize >= PARENTS, `customize called ${calls.customize} times`)
    assert.ok(calls.sync >= PARENTS, `sync called ${calls.sync} times`)
    assert.equal(maxInFlight, CAP, `at most ${CAP} requests at once, and the cap was reached`)
  })
})
