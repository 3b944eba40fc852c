// A hook that comes back after an outage: the first success re-queues every parent that failed
// on it, instead of each waiting out its own backoff.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import { waitFor } from '../../src/testing/index.js'
import { EngineFixture, isolatedComposite } from '../support/engine-fixture.js'

const { parentCrd, childCrd, parentObject, ccSpec } = isolatedComposite('RecParent', 'RecChild')

describe('hook recovery', () => {
  let fx: EngineFixture

  before(async () => {
    fx = await EngineFixture.start()
    await fx.crds(parentCrd.crd, childCrd.crd)
  })

  after(async () => {
    await fx.stop()
  })

  it('syncs every parent that failed during an outage as soon as the hook answers again', async () => {
    const ns = await fx.namespace()
    let down = true
    const hook = await fx.hook(
      (body) => {
        const name = (body as { parent: KubeObject }).parent.metadata.name ?? ''
        return {
          children: [
            {
              apiVersion: childCrd.apiVersion,
              kind: 'RecChild',
              metadata: { name, labels: { app: name } },
            },
          ],
        }
      },
      { status: () => (down ? 503 : 200) }
    )
    await fx.compositeController(`rec-${ns}`, ccSpec(hook.url, ns))
    const names = ['a', 'b', 'c', 'd', 'e']
    for (const name of names) await fx.client.create(parentCrd.ref, parentObject(name, ns))
    // About 12 s of failures: each parent's backoff has grown to several seconds by now.
    await new Promise((resolve) => setTimeout(resolve, 12_000))
    const failedCalls = hook.requests.length
    assert.ok(failedCalls >= names.length, `${failedCalls} failed calls`)
    down = false
    // A fresh parent syncs at once: its success re-queues the five that failed.
    const recovered = Date.now()
    await fx.client.create(parentCrd.ref, parentObject('fresh', ns))
    await waitFor(
      async () => {
        const list = await fx.client.list(childCrd.ref, { namespace: ns })
        return list.items.length === names.length + 1
      },
      { timeoutMs: 30_000, intervalMs: 100, description: 'every child' }
    )
    const tookMs = Date.now() - recovered
    assert.ok(tookMs < 3000, `all parents synced ${tookMs} ms after the hook came back`)
  })
})
