import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import type { HookEvent } from '../../api/hook-model.js'
import { FakeCluster } from '../../in-memory/fake-cluster.js'
import { Action } from '../../runtime/queue/controller-loop.js'
import { silentLogger } from '../../runtime/diagnostics/logger.js'
import type { EventType } from '../events/event-recorder.js'
import type { SyncPlan } from './plan-sync.js'
import { runSync } from './run-sync.js'
import type { SyncResponse, SyncStrategy } from './run-sync.js'

const PARENTS = { group: 'x', version: 'v1', resource: 'ps', namespaced: true }
const FINALIZER = 'test/finalizer'
const EMPTY_PLAN = {} as SyncPlan

interface Request {
  readonly parent: KubeObject
  readonly finalizing: boolean
}
interface Response extends SyncResponse {
  readonly echo: string
}

function parent(labels: Record<string, string>, extra: Partial<KubeObject['metadata']> = {}) {
  return {
    apiVersion: 'x/v1',
    kind: 'P',
    metadata: { name: 'p', namespace: 'ns', labels, ...extra },
  } satisfies KubeObject
}

/** A strategy that records each step it is asked for, and the events recorded. */
function recordingStrategy(
  client: FakeCluster,
  options: {
    readonly sync?: boolean
    readonly finalize?: boolean
    readonly response?: Partial<Response>
    readonly applied?: boolean
    readonly badAnswer?: boolean
  } = {}
) {
  const steps: string[] = []
  const events: string[] = []
  const hook = (name: string) => async (request: Request) => {
    steps.push(`hook:${name}:${String(request.finalizing)}`)
    return Promise.resolve({ resyncAfterMs: 0, echo: name, ...options.response })
  }
  const strategy: SyncStrategy<string, Request, Response, { response: Response }> = {
    finalizer: { client, ref: PARENTS, finalizer: FINALIZER },
    finalizerEnabled: options.finalize === true,
    hooks: {
      ...(options.sync === false ? {} : { sync: hook('sync') }),
      ...(options.finalize === true ? { finalize: hook('finalize') } : {}),
    },
    events: {
      record: (_object: KubeObject, type: EventType, reason: string) => {
        events.push(`${type}:${reason}`)
      },
    },
    matchesScope: (p) => p.metadata.labels?.['app'] === 'web',
    withoutHook: () => {
      steps.push('withoutHook')
      return Action.awaitChange()
    },
    observe: (p) => {
      steps.push(`observe:${p.metadata.finalizers?.join(',') ?? ''}`)
      return Promise.resolve('observed')
    },
    ask: async (p, observed, which, call) => {
      steps.push(`ask:${observed}`)
      return { response: await call({ parent: p, finalizing: which === 'finalize' }) }
    },
    plan: () => {
      steps.push('plan')
      if (options.badAnswer === true) throw new Error('bad answer')
      return EMPTY_PLAN
    },
    apply: ({ answer }) => {
      steps.push(`apply:${answer.response.echo}`)
      return Promise.resolve(options.applied ?? true)
    },
  }
  return { strategy, steps, events }
}

describe('runSync', () => {
  it('runs observe, ask, plan and apply in order for an in-scope parent', async () => {
    const client = new FakeCluster()
    const { strategy, steps } = recordingStrategy(client)
    const action = await runSync(
      strategy,
      parent({ app: 'web' }),
      AbortSignal.timeout(5000),
      silentLogger
    )
    assert.deepEqual(steps, ['observe:', 'ask:observed', 'hook:sync:false', 'plan', 'apply:sync'])
    assert.deepEqual(action, Action.awaitChange())
  })

  it('does nothing for a parent out of scope that holds no finalizer', async () => {
    const client = new FakeCluster()
    const { strategy, steps } = recordingStrategy(client)
    await runSync(strategy, parent({ app: 'other' }), AbortSignal.timeout(5000), silentLogger)
    assert.deepEqual(steps, [])
    assert.deepEqual(client.writes, [])
  })

  it('adds the finalizer before observing, and observes the parent as written', async () => {
    const client = new FakeCluster()
    const created = await client.create(PARENTS, parent({ app: 'web' }))
    client.clearWrites()
    const { strategy, steps } = recordingStrategy(client, { finalize: true })
    await runSync(strategy, created, AbortSignal.timeout(5000), silentLogger)
    assert.deepEqual(
      client.writes.map((w) => w.method),
      ['update']
    )
    assert.equal(steps[0], `observe:${FINALIZER}`)
  })

  it('calls finalize for a parent that left the selector while holding the finalizer', async () => {
    const client = new FakeCluster()
    const { strategy, steps } = recordingStrategy(client, { finalize: true })
    const leaving = parent({ app: 'other' }, { finalizers: [FINALIZER] })
    await runSync(strategy, leaving, AbortSignal.timeout(5000), silentLogger)
    assert.ok(steps.includes('hook:finalize:true'), steps.join(' '))
  })

  it('hands a parent no hook fits to the strategy, observing nothing', async () => {
    const client = new FakeCluster()
    const { strategy, steps } = recordingStrategy(client, { sync: false, finalize: true })
    const created = await client.create(
      PARENTS,
      parent({ app: 'web' }, { finalizers: [FINALIZER] })
    )
    await runSync(strategy, created, AbortSignal.timeout(5000), silentLogger)
    assert.deepEqual(steps, ['withoutHook'])
  })

  it('writes nothing and records no event when the plan rejects the answer', async () => {
    const client = new FakeCluster()
    const event: HookEvent = { type: 'Normal', reason: 'Hi', message: 'hello' }
    const { strategy, steps, events } = recordingStrategy(client, {
      badAnswer: true,
      response: { events: [event] },
    })
    await assert.rejects(
      runSync(strategy, parent({ app: 'web' }), AbortSignal.timeout(5000), silentLogger),
      /bad answer/
    )
    assert.equal(steps.at(-1), 'plan')
    assert.deepEqual(events, [])
  })

  it("records the answer's events and requeues after its resyncAfterSeconds", async () => {
    const client = new FakeCluster()
    const event: HookEvent = { type: 'Normal', reason: 'Hi', message: 'hello' }
    const { strategy, events } = recordingStrategy(client, {
      response: { events: [event], resyncAfterMs: 1500 },
    })
    const action = await runSync(
      strategy,
      parent({ app: 'web' }),
      AbortSignal.timeout(5000),
      silentLogger
    )
    assert.deepEqual(events, ['Normal:Hi'])
    assert.deepEqual(action, Action.requeue(1500))
  })

  it('waits for a change when the parent went away during apply', async () => {
    const client = new FakeCluster()
    const { strategy } = recordingStrategy(client, {
      applied: false,
      response: { resyncAfterMs: 1500 },
    })
    const action = await runSync(
      strategy,
      parent({ app: 'web' }),
      AbortSignal.timeout(5000),
      silentLogger
    )
    assert.deepEqual(action, Action.awaitChange())
  })
})
