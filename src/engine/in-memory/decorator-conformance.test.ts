import assert from 'node:assert/strict'
import { it } from 'node:test'
import { ConformanceHarness, runConformanceSuite } from './conformance.js'
import { decoratorAdapter } from './decorator-adapter.js'

runConformanceSuite(decoratorAdapter())

// Known engine issue, kept visible: prepareDesiredChildren always sets `labels` (to `{}` for an
// attachment without labels), the API server drops an empty map (`omitempty`), and the 3-way
// merge then sees a difference on every sync: an update per sync under InPlace, endless
// delete/create under Recreate (not tested here: it never settles).
it(
  'makes zero writes on a resync for an attachment without labels',
  { todo: 'engine injects labels: {} that the server drops; every sync rewrites the attachment' },
  async () => {
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
  }
)
