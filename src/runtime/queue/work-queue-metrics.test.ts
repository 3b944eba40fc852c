import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { noopWorkQueueMetrics } from './work-queue-metrics.js'

describe('noopWorkQueueMetrics', () => {
  it('accepts every event and records nothing', () => {
    assert.doesNotThrow(() => {
      noopWorkQueueMetrics.onAdd('a')
      noopWorkQueueMetrics.onGet('a', 1)
      noopWorkQueueMetrics.onDone('a', 2)
      noopWorkQueueMetrics.onRetry('a')
      noopWorkQueueMetrics.depth(3)
    })
    assert.ok(Object.isFrozen(noopWorkQueueMetrics), 'shared, so nobody can swap in a hook')
  })
})
