// Client-side rate limits as client-go spends them, at upstream's defaults (--client-go-qps=5
// --client-go-burst=10) with the 500 ms discovery interval tests and dev setups use: discovery
// has a budget of its own, watches take no token, so an idle engine spends nothing of the budget
// child writes need, and the writes of one sync never wait. Proved by counting what each budget's
// limiter is asked for and how long it made callers wait, not by wall time.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { EngineClientBudget } from '../../src/engine/engine.js'
import { tokenBucketLimiter } from '../../src/runtime/rate-limit/token-bucket-limiter.js'
import { waitFor } from '../../src/testing/index.js'
import { EngineFixture, isolatedComposite } from '../support/engine-fixture.js'

const budgets = isolatedComposite('BudgetParent', 'BudgetChild')
const CHILDREN = ['a', 'b', 'c']

interface Take {
  readonly budget: EngineClientBudget
  readonly atMs: number
  readonly waitedMs: number
}

describe('client-side rate limit budgets at qps 5, burst 10, discovery every 500 ms', () => {
  let fx: EngineFixture
  const takes: Take[] = []

  before(async () => {
    fx = await EngineFixture.start({
      clientRateLimit: { qps: 5, burst: 10 },
      discoveryIntervalMs: 500,
      makeLimiter: (budget, rate) => {
        const bucket = tokenBucketLimiter(rate)
        if (bucket === undefined) return undefined
        return {
          take: async (signal) => {
            const waitedMs = await bucket.take(signal)
            takes.push({ budget, atMs: Date.now(), waitedMs })
            return waitedMs
          },
        }
      },
    })
    await fx.crds(budgets.parentCrd.crd, budgets.childCrd.crd)
  })

  after(async () => {
    await fx.stop()
  })

  const spent = (budget: EngineClientBudget, fromMs: number, toMs = Infinity): Take[] =>
    takes.filter((t) => t.budget === budget && t.atMs >= fromMs && t.atMs < toMs)

  it('an idle engine spends discovery’s budget, not the one child writes need', async () => {
    const ns = await fx.namespace('budget')
    const hook = await fx.hook(() => ({ children: [] }))
    await fx.compositeController(`budget-idle-${ns}`, budgets.ccSpec(hook.url, ns))
    // Let the controller's informers list and settle, then watch a quiet window.
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const fromMs = Date.now()
    await new Promise((resolve) => setTimeout(resolve, 3000))
    const toMs = Date.now()
    assert.ok(
      spent('discovery', fromMs, toMs).length >= 4,
      `discovery refreshed in the window (${spent('discovery', fromMs, toMs).length} requests)`
    )
    assert.deepEqual(
      spent('objects', fromMs, toMs).map((t) => t.budget),
      [],
      'no object request, watches included, took a token while idle'
    )
  })

  it('the writes of one sync do not wait for the limiter while discovery runs', async () => {
    const ns = await fx.namespace('budget')
    const hook = await fx.hook((body) => {
      const parent = (body as { parent: { metadata: { name: string } } }).parent
      return {
        status: { children: CHILDREN.length },
        children: CHILDREN.map((suffix) => ({
          apiVersion: budgets.childCrd.apiVersion,
          kind: 'BudgetChild',
          metadata: { name: `${parent.metadata.name}-${suffix}`, labels: { app: 'p' } },
        })),
      }
    })
    await fx.compositeController(`budget-sync-${ns}`, budgets.ccSpec(hook.url, ns))
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const fromMs = Date.now()
    await fx.client.create(budgets.parentCrd.ref, budgets.parentObject('p', ns))
    await waitFor(
      async () => {
        const parent = await fx.client.get(budgets.parentCrd.ref, 'p', { namespace: ns })
        const status = parent['status'] as { children?: number } | undefined
        return status?.children === CHILDREN.length
      },
      { timeoutMs: 20_000, intervalMs: 100, description: 'the parent’s status written' }
    )
    const writes = spent('objects', fromMs)
    // Three creates and the status write, and nothing of discovery's.
    assert.ok(writes.length >= CHILDREN.length + 1, `${writes.length} object requests`)
    // Discovery keeps refreshing beside the sync (a fast sync may end between two refreshes).
    await waitFor(() => spent('discovery', fromMs).length > 0, {
      timeoutMs: 5_000,
      intervalMs: 100,
      description: 'a discovery refresh after the parent was created',
    })
    // An empty bucket at 5 qps makes a caller wait up to 200 ms; a token at hand costs
    // microseconds (the limiter's own await).
    assert.deepEqual(
      writes.filter((t) => t.waitedMs >= 1).map((t) => t.waitedMs),
      [],
      'no write of the sync waited for a token'
    )
  })
})
