import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Registry } from '../../runtime/metrics/prom-client-core.js'
import { ShardMetrics } from './shard-metrics.js'

describe('ShardMetrics', () => {
  it('counts handoffs after the first ring, owned, dropped and waiting parents, received objects and bytes, and fallbacks', async () => {
    const registry = new Registry()
    const metrics = new ShardMetrics(registry)
    metrics.served(1, true)
    metrics.served(3, false)
    metrics.owned('CompositeController-a', 34)
    metrics.dropped('CompositeController-a', 2)
    metrics.dropped('CompositeController-a', 1)
    metrics.waiting('CompositeController-a', 7)
    metrics.received('shps.v1.example.com', 40)
    metrics.receivedBytes('shps.v1.example.com', 1000)
    metrics.receivedBytes('shps.v1.example.com', 24)
    metrics.fellBack('shps.v1.example.com')
    metrics.held('shps.v1.example.com', 12)
    const text = await registry.metrics()
    assert.match(text, /^metacontroller_shard_ring_members 3$/m)
    assert.match(text, /^metacontroller_shard_handoffs_total 1$/m)
    assert.match(
      text,
      /^metacontroller_shard_owned_parents\{controller="CompositeController-a"\} 34$/m
    )
    assert.match(
      text,
      /^metacontroller_shard_parents_dropped_total\{controller="CompositeController-a"\} 3$/m
    )
    assert.match(
      text,
      /^metacontroller_shard_parents_waiting\{controller="CompositeController-a"\} 7$/m
    )
    assert.match(
      text,
      /^metacontroller_shard_received_objects_total\{resource="shps.v1.example.com"\} 40$/m
    )
    assert.match(
      text,
      /^metacontroller_shard_received_bytes_total\{resource="shps.v1.example.com"\} 1024$/m
    )
    assert.match(
      text,
      /^metacontroller_shard_cached_objects\{resource="shps.v1.example.com"\} 12$/m
    )
    assert.match(
      text,
      /^metacontroller_shard_server_side_fallbacks_total\{resource="shps.v1.example.com"\} 1$/m
    )
  })
})
