import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { HookFunction } from '../../api/hook-model.js'
import { HookCallLimiter, limitHooks } from './hook-call-limiter.js'
import type { LimitedHook } from './hook-call-limiter.js'

/** A hook call the test finishes by hand. */
interface PendingCall {
  readonly id: number
  finish(): void
  fail(error: Error): void
}

/** A fake hook that records calls and never answers until the test says so. */
function fakeHook(): {
  readonly calls: PendingCall[]
  readonly hook: HookFunction<number, string>
  running: number
  peak: number
} {
  const state = {
    calls: [] as PendingCall[],
    running: 0,
    peak: 0,
    hook: (id: number): Promise<string> =>
      new Promise<string>((resolve, reject) => {
        state.running++
        state.peak = Math.max(state.peak, state.running)
        state.calls.push({
          id,
          finish: () => {
            state.running--
            resolve(`done ${id}`)
          },
          fail: (error) => {
            state.running--
            reject(error)
          },
        })
      }),
  }
  return state
}

/** Lets every settled promise's continuations run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve()
}

describe('HookCallLimiter', () => {
  it('never runs more calls at once than its cap, and starts waiting calls first come first served', async () => {
    const limiter = new HookCallLimiter(2)
    const fake = fakeHook()
    const signal = new AbortController().signal
    const results = [1, 2, 3, 4, 5].map((id) =>
      limiter.run('sync', signal, () => fake.hook(id, signal))
    )
    await flush()
    assert.deepEqual(
      fake.calls.map((c) => c.id),
      [1, 2]
    )
    assert.equal(limiter.waiting, 3)
    fake.calls[1]?.finish()
    await flush()
    assert.deepEqual(
      fake.calls.map((c) => c.id),
      [1, 2, 3]
    )
    fake.calls[0]?.finish()
    fake.calls[2]?.finish()
    await flush()
    fake.calls[3]?.finish()
    fake.calls[4]?.finish()
    assert.deepEqual(await Promise.all(results), ['done 1', 'done 2', 'done 3', 'done 4', 'done 5'])
    assert.equal(fake.peak, 2)
    assert.equal(limiter.inFlight, 0)
    assert.equal(limiter.waiting, 0)
  })

  it('frees the slot of a failed call for the next one', async () => {
    const limiter = new HookCallLimiter(1)
    const fake = fakeHook()
    const signal = new AbortController().signal
    const first = limiter.run('sync', signal, () => fake.hook(1, signal))
    const second = limiter.run('sync', signal, () => fake.hook(2, signal))
    await flush()
    fake.calls[0]?.fail(new Error('hook down'))
    await assert.rejects(first, /hook down/)
    await flush()
    assert.equal(fake.calls.length, 2)
    fake.calls[1]?.finish()
    assert.equal(await second, 'done 2')
    assert.equal(limiter.inFlight, 0)
  })

  it('drops a waiting call whose signal aborts: it is never sent and rejects with the reason', async () => {
    const waiting: [LimitedHook, number][] = []
    const limiter = new HookCallLimiter(1, {
      onWaiting: (hook, delta) => waiting.push([hook, delta]),
    })
    const fake = fakeHook()
    const open = new AbortController().signal
    const cancelled = new AbortController()
    const first = limiter.run('sync', open, () => fake.hook(1, open))
    const dropped = limiter.run('customize', cancelled.signal, () => fake.hook(2, open))
    const third = limiter.run('finalize', open, () => fake.hook(3, open))
    await flush()
    assert.equal(limiter.waiting, 2)
    cancelled.abort(new Error('sync cancelled'))
    await assert.rejects(dropped, /sync cancelled/)
    assert.equal(limiter.waiting, 1)
    fake.calls[0]?.finish()
    await first
    await flush()
    assert.deepEqual(
      fake.calls.map((c) => c.id),
      [1, 3],
      'the aborted call never ran'
    )
    fake.calls[1]?.finish()
    await third
    assert.deepEqual(waiting, [
      ['customize', 1],
      ['finalize', 1],
      ['customize', -1],
      ['finalize', -1],
    ])
    assert.equal(limiter.inFlight, 0)
  })

  it('refuses a call whose signal already aborted, without taking a slot', async () => {
    const limiter = new HookCallLimiter(1)
    let ran = false
    await assert.rejects(
      limiter.run('sync', AbortSignal.abort(new Error('gone')), () => {
        ran = true
        return Promise.resolve()
      }),
      /gone/
    )
    assert.equal(ran, false)
    assert.equal(limiter.inFlight, 0)
  })

  it('rejects a cap that is not a positive integer', () => {
    assert.throws(() => new HookCallLimiter(0), RangeError)
    assert.throws(() => new HookCallLimiter(1.5), RangeError)
    assert.throws(() => new HookCallLimiter(Number.NaN), RangeError)
  })
})

describe('limitHooks', () => {
  it('puts sync, finalize and customize of one controller under one cap and keeps close', async () => {
    const limiter = new HookCallLimiter(2)
    const sync = fakeHook()
    const customize = fakeHook()
    let closed = false
    const hooks = limitHooks(
      {
        sync: sync.hook,
        customize: customize.hook,
        close: () => {
          closed = true
          return Promise.resolve()
        },
      },
      limiter
    )
    assert.equal('finalize' in hooks, false, 'an absent hook stays absent')
    const signal = new AbortController().signal
    const calls = [
      hooks.sync(1, signal),
      hooks.customize(2, signal),
      hooks.customize(3, signal),
      hooks.sync(4, signal),
    ]
    await flush()
    assert.equal(sync.calls.length + customize.calls.length, 2)
    assert.equal(limiter.waiting, 2)
    const finished = new Set<PendingCall>()
    for (let round = 0; round < 2; round++) {
      for (const call of [...sync.calls, ...customize.calls]) {
        if (!finished.has(call)) call.finish()
        finished.add(call)
      }
      await flush()
    }
    assert.equal(finished.size, 4)
    assert.deepEqual(await Promise.all(calls), ['done 1', 'done 2', 'done 3', 'done 4'])
    await hooks.close()
    assert.equal(closed, true)
  })
})
