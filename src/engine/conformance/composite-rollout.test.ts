// The rollout step inside the real loop, on the fake cluster: what the loop does with
// ControllerRevisions (watched, never a trigger) and the zero-write steady state.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CONTROLLER_REVISIONS } from '../../kube/well-known-resources.js'
import { compositeAdapter } from './composite-adapter.js'
import { ConformanceHarness } from './conformance-harness.js'
import type { HarnessOptions } from './conformance-harness.js'

const adapter = compositeAdapter({ generateSelector: false })

async function rolling(
  options: HarnessOptions,
  body: (h: ConformanceHarness) => Promise<void>
): Promise<void> {
  const h = await ConformanceHarness.start(adapter, { updateMethod: 'RollingInPlace', ...options })
  try {
    h.sync = ({ subject }) => ({
      desired: ['web-a', 'web-b'].map((n) => adapter.desiredChild(subject, n, { v: '1' })),
    })
    await h.createSubject('web')
    await h.settle()
    assert.equal(h.children().length, 2)
    assert.equal(h.cluster.objects(CONTROLLER_REVISIONS).length, 1, 'one revision')
    h.cluster.clearWrites()
    await body(h)
  } finally {
    await h.stop()
  }
}

describe('composite rollout in the loop', () => {
  it('syncs on a child change but not on a ControllerRevision change', () =>
    rolling({}, async (h) => {
      const before = h.callsFor('web').length
      const [revision] = h.cluster.objects(CONTROLLER_REVISIONS)
      assert.ok(revision)
      await h.cluster.update(CONTROLLER_REVISIONS, {
        ...revision,
        metadata: { ...revision.metadata, annotations: { touched: 'yes' } },
      })
      await h.settle()
      assert.equal(h.callsFor('web').length, before, 'a revision event enqueues nothing')
      const [child] = h.children()
      assert.ok(child)
      await h.cluster.update(adapter.child.ref, {
        ...child,
        metadata: { ...child.metadata, annotations: { touched: 'yes' } },
      })
      await h.settle()
      assert.ok(h.callsFor('web').length > before, 'a child event syncs the parent')
    }))

  it('makes zero writes, revisions included, on a periodic resync once converged', () =>
    rolling({ resyncPeriodMs: 10 }, async (h) => {
      const before = h.callsFor('web').length
      await h.waitFor(() => h.callsFor('web').length >= before + 3, 'three periodic resyncs')
      await h.settle()
      assert.deepEqual(h.cluster.writes, [])
    }))
})
