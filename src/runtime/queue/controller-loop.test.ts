import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AlreadyExistsError, ConflictError } from '../../kube/api-error.js'
import { Action, ControllerLoop, outcomeOf } from './controller-loop.js'
import type {
  ControllerLoopOptions,
  Outcome,
  Reconcile,
  ReconcileContext,
} from './controller-loop.js'
import { FakeClock } from '../clock/fake-clock.js'
import { NotSyncedError, RetryAfterError, TerminalError } from './reconcile-errors.js'
import { WorkQueue } from './work-queue.js'
import { settleMany, until } from '../../../test/support/event-loop-turns.js'

/** A promise that stays pending until opened. */
class Gate {
  #open: () => void = () => undefined
  readonly promise = new Promise<void>((resolve) => {
    this.#open = resolve
  })

  open(): void {
    this.#open()
  }
}

function conflict(): ConflictError {
  return new ConflictError('m', {
    statusCode: 409,
    reason: 'Conflict',
    request: { method: 'PUT', path: '/x' },
  })
}

/** A queue on a fake clock, a loop over it, and a record of every outcome the observer saw. */
function harness(reconcile: Reconcile, workers = 1) {
  const clock = new FakeClock()
  const queue = new WorkQueue({ name: 'test', clock })
  const outcomes: { key: string; outcome: Outcome }[] = []
  const loop = new ControllerLoop({
    queue,
    reconcile,
    workers,
    observer: {
      onOutcome: (key, outcome) => {
        outcomes.push({ key, outcome })
      },
    },
  })
  return { clock, queue, loop, outcomes }
}

describe('outcomeOf', () => {
  it('maps awaitChange to success', () => {
    assert.deepEqual(outcomeOf({ action: Action.awaitChange() }), { result: 'success' })
  })

  it('maps requeue(ms) to requeue_after with the same delay', () => {
    assert.deepEqual(outcomeOf({ action: Action.requeue(1500) }), {
      result: 'requeue_after',
      afterMs: 1500,
    })
  })

  it('maps a RetryAfterError to retry_after carrying its delay and the error', () => {
    const error = new RetryAfterError('slow down', 7000)
    const outcome = outcomeOf({ error })
    assert.deepEqual(outcome, { result: 'retry_after', afterMs: 7000, error })
    assert.equal(outcome.error, error, 'the same error object')
  })

  it('maps a NotSyncedError to not_synced', () => {
    const error = new NotSyncedError('cache not synced')
    assert.deepEqual(outcomeOf({ error }), { result: 'not_synced', error })
  })

  it('maps a ConflictError (409 Conflict) to conflict', () => {
    const error = conflict()
    const outcome = outcomeOf({ error })
    assert.equal(outcome.result, 'conflict')
    assert.equal('error' in outcome && outcome.error, error)
  })

  it('maps a TerminalError, and a subclass of it, to terminal', () => {
    const error = new TerminalError('invalid spec')
    assert.deepEqual(outcomeOf({ error }), { result: 'terminal', error })
    class InvalidSpecError extends TerminalError {
      override readonly name = 'InvalidSpecError'
    }
    assert.equal(outcomeOf({ error: new InvalidSpecError('bad') }).result, 'terminal')
  })

  it('maps any other error, a 409 AlreadyExists and a thrown non-Error to error', () => {
    const plain = new Error('boom')
    assert.deepEqual(outcomeOf({ error: plain }), { result: 'error', error: plain })
    const exists = new AlreadyExistsError('m', {
      statusCode: 409,
      reason: 'AlreadyExists',
      request: { method: 'POST', path: '/x' },
    })
    assert.equal(outcomeOf({ error: exists }).result, 'error')
    assert.deepEqual(outcomeOf({ error: 'a string' }), { result: 'error', error: 'a string' })
    assert.deepEqual(outcomeOf({ error: undefined }), { result: 'error', error: undefined })
  })
})

describe('ControllerLoop', () => {
  it('forgets a key after a success, so its back-off starts again from zero', async () => {
    let calls = 0
    const { clock, queue, loop } = harness(() => {
      calls++
      return calls === 1
        ? Promise.reject(new Error('first attempt fails'))
        : Promise.resolve(Action.awaitChange())
    })
    loop.start()
    queue.add('ns/a')
    await until(() => queue.numRequeues('ns/a') === 1, 'the failure is counted')
    clock.advance(5)
    await until(() => calls === 2, 'the retry runs')
    await until(() => queue.processingCount() === 0, 'the retry finishes')
    assert.equal(queue.numRequeues('ns/a'), 0, 'success forgets the back-off')
    assert.equal(clock.pendingTimers(), 0, 'nothing is scheduled after a success')
    await loop.stop()
  })

  it('retries a failing key with exponential back-off, so numRequeues grows', async () => {
    const seenAt: number[] = []
    const { clock, queue, loop, outcomes } = harness(() => {
      seenAt.push(clock.now())
      return Promise.reject(new Error('always fails'))
    })
    loop.start()
    queue.add('ns/a')
    await until(() => queue.numRequeues('ns/a') === 1, 'the first failure')
    clock.advance(4)
    await settleMany()
    assert.equal(seenAt.length, 1, 'not retried before the 5 ms back-off')
    clock.advance(1)
    await until(() => queue.numRequeues('ns/a') === 2, 'the second failure')
    clock.advance(10)
    await until(() => queue.numRequeues('ns/a') === 3, 'the third failure')
    clock.advance(20)
    await until(() => queue.numRequeues('ns/a') === 4, 'the fourth failure')
    assert.deepEqual(seenAt, [0, 5, 15, 35], 'delays of 5, 10 and 20 ms')
    assert.ok(outcomes.every(({ outcome }) => outcome.result === 'error'))
    await loop.stop()
  })

  it('retries not_synced and conflict outcomes with back-off too', async () => {
    let calls = 0
    const { clock, queue, loop, outcomes } = harness(() => {
      calls++
      return Promise.reject(calls === 1 ? new NotSyncedError('not yet') : conflict())
    })
    loop.start()
    queue.add('a')
    await until(() => queue.numRequeues('a') === 1, 'the not-synced retry is counted')
    clock.advance(5)
    await until(() => queue.numRequeues('a') === 2, 'the conflict retry is counted')
    assert.deepEqual(
      outcomes.map(({ outcome }) => outcome.result),
      ['not_synced', 'conflict']
    )
    await loop.stop()
  })

  it('re-adds a key after exactly the requested requeue delay, without back-off', async () => {
    const seenAt: number[] = []
    const { clock, queue, loop } = harness(() => {
      seenAt.push(clock.now())
      return Promise.resolve(seenAt.length === 1 ? Action.requeue(1000) : Action.awaitChange())
    })
    loop.start()
    queue.add('a')
    await until(() => seenAt.length === 1 && queue.processingCount() === 0, 'the first run')
    assert.equal(queue.numRequeues('a'), 0, 'a requeue is not a failure')
    clock.advance(999)
    await settleMany()
    assert.equal(seenAt.length, 1, 'not re-run before the delay')
    clock.advance(1)
    await until(() => seenAt.length === 2, 'the requeued run')
    assert.deepEqual(seenAt, [0, 1000])
    await loop.stop()
  })

  it('re-adds a key after a RetryAfterError delay without growing its back-off', async () => {
    const seenAt: number[] = []
    const { clock, queue, loop } = harness(() => {
      seenAt.push(clock.now())
      return seenAt.length === 1
        ? Promise.reject(new RetryAfterError('429', 3000))
        : Promise.resolve(Action.awaitChange())
    })
    loop.start()
    queue.add('a')
    await until(() => seenAt.length === 1 && queue.processingCount() === 0, 'the first run')
    assert.equal(queue.numRequeues('a'), 0)
    clock.advance(2999)
    await settleMany()
    assert.equal(seenAt.length, 1)
    clock.advance(1)
    await until(() => seenAt.length === 2, 'the retry after 3 s')
    await loop.stop()
  })

  it('does not retry a terminal error', async () => {
    let calls = 0
    const { clock, queue, loop, outcomes } = harness(() => {
      calls++
      return Promise.reject(new TerminalError('cannot work'))
    })
    loop.start()
    queue.add('a')
    await until(() => outcomes.length === 1, 'the terminal outcome')
    assert.equal(clock.pendingTimers(), 0, 'no retry is scheduled')
    clock.advance(10_000_000)
    await settleMany()
    assert.equal(calls, 1)
    assert.equal(queue.numRequeues('a'), 0)
    assert.equal(queue.len(), 0)
    queue.add('a')
    await until(() => calls === 2, 'a new event runs it again')
    await loop.stop()
  })

  it('aborts a reconcile that outlasts reconcileTimeoutMs with a TimeoutError', async () => {
    let reason: unknown
    const queue = new WorkQueue({ name: 'test', clock: new FakeClock() })
    const loop = new ControllerLoop({
      queue,
      reconcileTimeoutMs: 5,
      reconcile: (_key, { signal }) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            reason = signal.reason
            reject(new Error('aborted'))
          })
        }),
    })
    loop.start()
    queue.add('a')
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.ok(reason instanceof DOMException && reason.name === 'TimeoutError', String(reason))
    await loop.stop()
  })

  it('never aborts the signal of a reconcile that has ended, even after its timeout', async () => {
    let signal: AbortSignal | undefined
    const queue = new WorkQueue({ name: 'test', clock: new FakeClock() })
    const loop = new ControllerLoop({
      queue,
      reconcileTimeoutMs: 5,
      reconcile: (_key, context) => {
        signal = context.signal
        return Promise.resolve(Action.awaitChange())
      },
    })
    loop.start()
    queue.add('a')
    // Past the timeout: a timer still armed after the reconcile would have fired by now.
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.equal(signal?.aborted, false)
    await loop.stop()
  })

  it('stop() waits for an in-flight reconcile to finish, without aborting it', async () => {
    const gate = new Gate()
    const started = new Gate()
    let finished = false
    let context: ReconcileContext | undefined
    const { queue, loop } = harness(async (_key, ctx) => {
      context = ctx
      started.open()
      await gate.promise
      finished = true
      return Action.awaitChange()
    })
    loop.start()
    queue.add('a')
    await started.promise
    let stopped = false
    const stopping = loop.stop().then(() => {
      stopped = true
    })
    await settleMany()
    assert.equal(stopped, false, 'stop() waits for the in-flight reconcile')
    assert.equal(queue.isShuttingDown(), true, 'no new keys are taken')
    queue.add('b')
    assert.equal(queue.len(), 0, 'adds are ignored while stopping')
    gate.open()
    await stopping
    assert.equal(finished, true)
    assert.equal(context?.signal.aborted, false, 'a reconcile that finishes in time is not aborted')
  })

  it('stop() aborts an in-flight reconcile once the grace period has passed', async () => {
    const started = new Gate()
    let abortReason: unknown
    const reasonSeen = (): unknown => abortReason
    const { clock, queue, loop, outcomes } = harness(
      (_key, { signal }) =>
        new Promise<Action>((_resolve, reject) => {
          started.open()
          signal.addEventListener('abort', () => {
            abortReason = signal.reason
            reject(signal.reason as Error)
          })
        })
    )
    loop.start()
    queue.add('a')
    await started.promise
    const stopping = loop.stop(1000)
    clock.advance(999)
    await settleMany()
    assert.equal(reasonSeen(), undefined, 'not aborted within the grace period')
    clock.advance(1)
    await stopping
    assert.ok(reasonSeen() instanceof Error, 'aborted with the stop reason')
    assert.equal(outcomes.length, 1)
    assert.equal(outcomes[0]?.outcome.result, 'error')
  })

  it('never runs one key twice at once, even with many workers and repeated adds', async () => {
    const running = new Map<string, number>()
    let maxConcurrentSameKey = 0
    let maxConcurrentOverall = 0
    let calls = 0
    const gates: Gate[] = []
    const { queue, loop } = harness(async (key) => {
      calls++
      const now = (running.get(key) ?? 0) + 1
      running.set(key, now)
      maxConcurrentSameKey = Math.max(maxConcurrentSameKey, now)
      maxConcurrentOverall = Math.max(
        maxConcurrentOverall,
        [...running.values()].reduce((a, b) => a + b, 0)
      )
      const gate = new Gate()
      gates.push(gate)
      await gate.promise
      running.set(key, (running.get(key) ?? 1) - 1)
      return Action.awaitChange()
    }, 4)
    loop.start()
    queue.add('a')
    queue.add('b')
    await until(() => gates.length === 2, 'both keys are taken')
    for (let i = 0; i < 5; i++) queue.add('a')
    await settleMany()
    assert.equal(gates.length, 2, 'a busy key is not handed to an idle worker')
    assert.equal(maxConcurrentOverall, 2, 'different keys do run in parallel')
    for (const gate of gates.splice(0)) gate.open()
    await until(() => gates.length === 1, 'the key added while busy runs once more')
    gates[0]?.open()
    await until(() => queue.processingCount() === 0 && queue.len() === 0, 'all done')
    assert.equal(maxConcurrentSameKey, 1)
    assert.equal(calls, 3, 'five adds during processing cost one extra reconcile')
    await loop.stop()
  })

  it('reports every outcome to the observer with its key and a duration', async () => {
    const results: Record<string, () => Promise<Action>> = {
      ok: () => Promise.resolve(Action.awaitChange()),
      later: () => Promise.resolve(Action.requeue(60_000)),
      slow: () => Promise.reject(new RetryAfterError('429', 60_000)),
      cache: () => Promise.reject(new NotSyncedError('x')),
      race: () => Promise.reject(conflict()),
      bad: () => Promise.reject(new TerminalError('x')),
      boom: () => Promise.reject(new Error('x')),
    }
    const durations: number[] = []
    const clock = new FakeClock()
    const queue = new WorkQueue({ name: 'test', clock })
    const seen = new Map<string, string>()
    const loop = new ControllerLoop({
      queue,
      workers: 3,
      reconcile: (key) => {
        const run = results[key]
        assert.ok(run !== undefined)
        return run()
      },
      observer: {
        onOutcome: (key, outcome, durationMs) => {
          seen.set(key, outcome.result)
          durations.push(durationMs)
        },
      },
    })
    loop.start()
    for (const key of Object.keys(results)) queue.add(key)
    await until(() => seen.size === 7, 'every key is reported')
    assert.deepEqual(Object.fromEntries(seen), {
      ok: 'success',
      later: 'requeue_after',
      slow: 'retry_after',
      cache: 'not_synced',
      race: 'conflict',
      bad: 'terminal',
      boom: 'error',
    })
    assert.ok(durations.every((ms) => Number.isFinite(ms) && ms >= 0))
    await loop.stop()
  })

  it('keeps calling the observer for each dequeue, once per reconcile', async () => {
    let calls = 0
    const { clock, queue, loop, outcomes } = harness(() => {
      calls++
      return calls < 3
        ? Promise.reject(new Error('transient'))
        : Promise.resolve(Action.awaitChange())
    })
    loop.start()
    queue.add('a')
    await until(() => outcomes.length === 1, 'first outcome')
    clock.advance(5)
    await until(() => outcomes.length === 2, 'second outcome')
    clock.advance(10)
    await until(() => outcomes.length === 3, 'third outcome')
    assert.deepEqual(
      outcomes.map(({ key, outcome }) => `${key}:${outcome.result}`),
      ['a:error', 'a:error', 'a:success']
    )
    assert.equal(calls, 3)
    await loop.stop()
  })

  /** One worker holding key `a` at a gate, with `b` queued behind it. */
  async function heldAtGate(observer?: ControllerLoopOptions['observer']): Promise<{
    gate: Gate
    ran: string[]
    queue: WorkQueue
    loop: ControllerLoop
  }> {
    const gate = new Gate()
    const ran: string[] = []
    const queue = new WorkQueue<string>({ name: 'test', clock: new FakeClock() })
    const loop = new ControllerLoop({
      queue,
      workers: 1,
      reconcile: async (key) => {
        ran.push(key)
        if (key === 'a') await gate.promise
        return Action.awaitChange()
      },
      ...(observer === undefined ? {} : { observer }),
    })
    loop.start()
    queue.add('a')
    queue.add('b')
    await until(() => ran.length === 1, 'the first key is taken')
    return { gate, ran, queue, loop }
  }

  it('an observer that throws does not kill its worker or fail stop()', async () => {
    const { gate, ran, loop } = await heldAtGate({
      onOutcome: () => {
        throw new Error('observer broke')
      },
    })
    gate.open()
    await until(() => ran.length === 2, 'the worker goes on with the key queued behind')
    assert.deepEqual(ran, ['a', 'b'])
    await assert.doesNotReject(loop.stop())
  })

  it('stop() lets the in-flight reconcile finish and takes no queued key', async () => {
    const { gate, ran, queue, loop } = await heldAtGate()
    const stopping = loop.stop()
    gate.open()
    await stopping
    assert.deepEqual(ran, ['a'], 'a stopping leader hands queued keys to its successor')
    assert.equal(queue.len(), 1)
  })

  it('a reconcile that throws synchronously is treated as an error and retried', async () => {
    let calls = 0
    const { queue, loop, outcomes } = harness(() => {
      calls++
      throw new Error('sync throw')
    })
    loop.start()
    queue.add('a')
    await until(() => outcomes.length === 1, 'the outcome')
    assert.equal(outcomes[0]?.outcome.result, 'error')
    assert.equal(queue.numRequeues('a'), 1)
    assert.equal(calls, 1)
    await loop.stop()
  })
})

describe('ControllerLoop gate', () => {
  it('takes no key before the gate opens, then processes what queued meanwhile', async () => {
    const gate = new Gate()
    const seen: string[] = []
    const queue = new WorkQueue({ name: 'gated', clock: new FakeClock() })
    const loop = new ControllerLoop({
      queue,
      workers: 2,
      gate: gate.promise,
      reconcile: (key) => {
        seen.push(key)
        return Promise.resolve(Action.awaitChange())
      },
    })
    loop.start()
    queue.add('a')
    queue.add('b')
    await settleMany()
    assert.deepEqual(seen, [])
    gate.open()
    await until(() => seen.length === 2, 'both keys are processed')
    assert.deepEqual(seen.sort(), ['a', 'b'])
    await loop.stop()
  })

  it('stops promptly while its gate is still closed', async () => {
    const queue = new WorkQueue({ name: 'gated', clock: new FakeClock() })
    let calls = 0
    const loop = new ControllerLoop({
      queue,
      gate: new Promise(() => undefined),
      reconcile: () => {
        calls++
        return Promise.resolve(Action.awaitChange())
      },
    })
    loop.start()
    queue.add('a')
    await loop.stop(0)
    assert.equal(calls, 0)
  })
})
