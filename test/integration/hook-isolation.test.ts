// One slow hook cannot take every worker: each hosted controller has workers of its own
// (`--workers`) and a hook connection pool of its own, so the hook concurrency of a controller is
// bounded by its worker count, and a controller whose hook hangs leaves the others untouched.
// The proof is by ordering and counts, not time: while every call of A's hook hangs, B's parents
// all converge, and A never has more calls in flight than it has workers.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import { waitFor } from '../../src/testing/index.js'
import { EngineFixture, isolatedComposite } from '../support/engine-fixture.js'

const WORKERS = 2
const slow = isolatedComposite('HangParent', 'HangChild')
const fast = isolatedComposite('BriskParent', 'BriskChild')

/** A sync answer with one child of `kind` named after the parent. */
function answer(body: unknown, apiVersion: string, kind: string): unknown {
  const name = (body as { parent: KubeObject }).parent.metadata.name ?? ''
  return { children: [{ apiVersion, kind, metadata: { name, labels: { app: name } } }] }
}

describe('hook isolation between hosted controllers', () => {
  let fx: EngineFixture

  before(async () => {
    fx = await EngineFixture.start({ workers: WORKERS })
    await fx.crds(slow.parentCrd.crd, slow.childCrd.crd, fast.parentCrd.crd, fast.childCrd.crd)
  })

  after(async () => {
    await fx.stop()
  })

  it("a hanging hook of controller A holds only A's workers; B's parents all converge", async () => {
    const ns = await fx.namespace('iso')
    let inFlight = 0
    let maxInFlight = 0
    let answered = 0
    let release: () => void = () => undefined
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    const hang = await fx.hook(async (body) => {
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      await released
      inFlight--
      answered++
      return answer(body, slow.childCrd.apiVersion, 'HangChild')
    })
    const brisk = await fx.hook((body) => answer(body, fast.childCrd.apiVersion, 'BriskChild'))
    // A long hook timeout, so A's calls hang for the whole test instead of failing and retrying.
    await fx.compositeController(`hang-${ns}`, {
      ...slow.ccSpec(hang.url, ns),
      hooks: { sync: { webhook: { url: hang.url, timeout: '120s' } } },
    })
    await fx.compositeController(`brisk-${ns}`, fast.ccSpec(brisk.url, ns))

    const slowNames = ['s1', 's2', 's3', 's4', 's5', 's6']
    for (const name of slowNames)
      await fx.client.create(slow.parentCrd.ref, slow.parentObject(name, ns))
    await waitFor(() => inFlight === WORKERS, {
      timeoutMs: 30_000,
      description: `every worker of A (${WORKERS}) in A's hanging hook`,
    })

    const fastNames = ['f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7', 'f8']
    for (const name of fastNames)
      await fx.client.create(fast.parentCrd.ref, fast.parentObject(name, ns))
    await waitFor(
      async () =>
        (await fx.client.list(fast.childCrd.ref, { namespace: ns })).items.length ===
        fastNames.length,
      { timeoutMs: 30_000, intervalMs: 100, description: "every child of B's parents" }
    )
    assert.equal(answered, 0, "B converged while every call of A's hook still hung")
    assert.equal(inFlight, WORKERS, 'A still holds exactly its own workers')
    assert.equal(maxInFlight, WORKERS, "A's hook never had more calls in flight than A has workers")

    release()
    await waitFor(
      async () =>
        (await fx.client.list(slow.childCrd.ref, { namespace: ns })).items.length ===
        slowNames.length,
      { timeoutMs: 30_000, intervalMs: 100, description: "every child of A's parents" }
    )
  })
})
