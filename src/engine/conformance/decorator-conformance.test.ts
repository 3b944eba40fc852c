import assert from 'node:assert/strict'
import { it } from 'node:test'
import { ConformanceHarness, runConformanceSuite } from './conformance.js'
import { decoratorAdapter } from './decorator-adapter.js'

runConformanceSuite(decoratorAdapter())

// A regression test: the engine used to give an attachment without labels `labels: {}`, which the
// API server drops (omitempty), so the 3-way merge saw a change on every sync: an update per sync
// under InPlace, endless delete/create under Recreate.
it('makes zero writes on a resync for an attachment without labels', async () => {
  const adapter = decoratorAdapter()
  const h = await ConformanceHarness.start(adapter, { updateMethod: 'InPlace' })
  try {
    h.sync = () => ({
      desired: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain' }, data: {} }],
    })
    await h.createSubject('web')
    await h.settle()
    h.cluster.clearWrites()
    h.poke('web')
    await h.settle()
    assert.deepEqual(h.cluster.writes, [])
  } finally {
    await h.stop()
  }
})
