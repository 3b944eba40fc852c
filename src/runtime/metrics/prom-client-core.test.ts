import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import * as prom from 'prom-client'
import { collectDefaultMetrics, Registry } from './prom-client-core.js'

/** Each metric's name, type and help, in exposition order. */
function shapeOf(registry: prom.Registry): string[] {
  return registry.getMetricsAsArray().map((m) => {
    const metric = m as unknown as { name: string; help: string; type?: string }
    return `${metric.name} ${metric.type ?? ''} ${metric.help}`
  })
}

describe('collectDefaultMetrics', () => {
  it("exposes the very series prom-client's own collectDefaultMetrics does, in its order", () => {
    const theirs = new prom.Registry()
    prom.collectDefaultMetrics({ register: theirs })
    const ours = new Registry()
    collectDefaultMetrics({ register: ours })
    assert.deepEqual(shapeOf(ours), shapeOf(theirs))
  })

  it('counts process CPU time: user plus system is the total', async () => {
    const registry = new Registry()
    collectDefaultMetrics({ register: registry })
    // Burn a little CPU so that the counters move.
    const until = performance.now() + 20
    while (performance.now() < until);
    const value = async (name: string): Promise<number> => {
      const metric = registry.getSingleMetric(name)
      assert.ok(metric !== undefined, name)
      return (await metric.get()).values[0]?.value ?? NaN
    }
    const user = await value('process_cpu_user_seconds_total')
    const system = await value('process_cpu_system_seconds_total')
    const total = await value('process_cpu_seconds_total')
    assert.ok(user > 0, `user ${user}`)
    assert.ok(Math.abs(user + system - total) < 1e-9, `${user} + ${system} = ${total}`)
  })
})
