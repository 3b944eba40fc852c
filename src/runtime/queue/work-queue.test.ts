import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ExponentialBackoff } from '../rate-limit/backoff.js'
import { FakeClock } from '../clock/fake-clock.js'
import { TokenBucket } from '../rate-limit/token-bucket.js'
import type { WorkQueueMetrics } from './work-queue-metrics.js'
import { WorkQueue, type WorkQueueOptions, type WorkQueuePriority } from './work-queue.js'
import { settle } from '../../../test/support/event-loop-turns.js'

/** Creates a queue on a fake clock. */
function fakeQueue(options: Omit<WorkQueueOptions, 'clock'> = {}): {
  clock: FakeClock
  queue: WorkQueue
} {
  const clock = new FakeClock()
  return { clock, queue: new WorkQueue({ ...options, clock }) }
}

/** Takes and finishes every queued key, returning them in the order they were handed out. */
async function drain(queue: WorkQueue): Promise<string[]> {
  const keys: string[] = []
  while (queue.len() > 0) {
    const key = await queue.get()
    assert.ok(key !== undefined)
    keys.push(key)
    queue.done(key)
  }
  return keys
}

/** Tracks whether a promise has settled, for asserting that a get is still waiting. */
function track<T>(promise: Promise<T>): { settled: () => boolean; promise: Promise<T> } {
  let settled = false
  const tracked = promise.finally(() => {
    settled = true
  })
  return { settled: () => settled, promise: tracked }
}

/** Returns a pseudo-random generator with a fixed seed (mulberry32), for reproducible runs. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

describe('WorkQueue', () => {
  describe('deduplication and in-flight keys', () => {
    it('dedupes a key added twice before get', async () => {
      const { queue } = fakeQueue()
      queue.add('a')
      queue.add('a')
      queue.add('b')
      queue.add('a', { priority: 'low' })
      assert.equal(queue.len(), 2)
      assert.deepEqual(await drain(queue), ['a', 'b'])
    })

    it('hands out keys first in, first out within a lane', async () => {
      const { queue } = fakeQueue()
      for (const key of ['c', 'a', 'b']) queue.add(key)
      assert.deepEqual(await drain(queue), ['c', 'a', 'b'])
      const low = fakeQueue().queue
      for (const key of ['z', 'x', 'y']) low.add(key, { priority: 'low' })
      assert.deepEqual(await drain(low), ['z', 'x', 'y'])
    })

    it('never hands out a key that is in flight', async () => {
      const { queue } = fakeQueue()
      queue.add('a')
      assert.equal(await queue.get(), 'a')
      queue.add('a')
      assert.equal(queue.len(), 0, 'a held key is not queued')
      const second = track(queue.get())
      await settle()
      assert.equal(second.settled(), false, 'the second worker does not get the held key')
      queue.add('b')
      assert.equal(await second.promise, 'b')
      queue.done('a')
      assert.equal(await queue.get(), 'a')
      assert.equal(queue.processingCount(), 2)
    })

    it('runs a key re-added during processing once more after done', async () => {
      const { queue } = fakeQueue()
      queue.add('a')
      const key = await queue.get()
      assert.equal(key, 'a')
      queue.add('a')
      queue.add('a')
      queue.add('a', { priority: 'low' })
      assert.deepEqual([queue.len(), queue.processingCount()], [0, 1])
      queue.done('a')
      assert.deepEqual([queue.len(), queue.processingCount()], [1, 0])
      assert.deepEqual(await drain(queue), ['a'])
      assert.equal(queue.len(), 0)
    })

    it('ignores done for a key that no worker holds', async () => {
      const { queue } = fakeQueue()
      queue.add('a')
      queue.done('a')
      queue.done('never-added')
      assert.deepEqual([queue.len(), queue.processingCount()], [1, 0])
      assert.equal(await queue.get(), 'a')
      queue.done('a')
      queue.done('a')
      assert.deepEqual([queue.len(), queue.processingCount()], [0, 0])
    })

    it('matches a model of pending and in-flight keys through 20,000 random operations', async () => {
      const random = seededRandom(20240601)
      const { queue } = fakeQueue({ highBurst: 3 })
      // The model: keys waiting for a worker, keys held, and held keys re-added meanwhile.
      const queued = new Set<string>()
      const held = new Set<string>()
      const readded = new Set<string>()
      let handedOut = 0
      for (let step = 0; step < 20_000; step++) {
        const roll = random()
        const key = `k${Math.floor(random() * 30)}`
        if (roll < 0.45) {
          const priority: WorkQueuePriority = random() < 0.5 ? 'high' : 'low'
          queue.add(key, { priority })
          if (held.has(key)) readded.add(key)
          else queued.add(key)
        } else if (roll < 0.75 && queue.len() > 0) {
          const got = await queue.get()
          assert.ok(got !== undefined)
          assert.ok(!held.has(got), `${got} handed out while in flight`)
          assert.ok(queued.delete(got), `${got} handed out without being queued`)
          held.add(got)
          handedOut++
        } else {
          const [first] = held
          if (first === undefined) continue
          held.delete(first)
          queue.done(first)
          if (readded.delete(first)) queued.add(first)
        }
        assert.equal(queue.len(), queued.size, `queue length at step ${step}`)
        assert.equal(queue.processingCount(), held.size, `in-flight count at step ${step}`)
      }
      assert.ok(handedOut > 4000, `exercised ${handedOut} gets`)
      for (const key of held) queue.done(key)
      const rest = await drain(queue)
      assert.deepEqual(new Set(rest), new Set([...queued, ...readded]))
      assert.equal(new Set(rest).size, rest.length, 'each owed key is handed out once')
    })
  })

  describe('waiting gets', () => {
    it('hands a key added later to a waiting get', async () => {
      const { queue } = fakeQueue()
      const waiting = queue.get()
      queue.add('a')
      assert.equal(queue.processingCount(), 1, 'the key is in flight as soon as it is handed out')
      assert.equal(await waiting, 'a')
    })

    it('serves waiting gets first come, first served', async () => {
      const { queue } = fakeQueue()
      const first = queue.get()
      const second = queue.get()
      queue.add('a')
      queue.add('b')
      assert.deepEqual(await Promise.all([first, second]), ['a', 'b'])
    })

    it('rejects an aborted get with the reason and gives its key to the next getter', async () => {
      const { queue } = fakeQueue()
      const controller = new AbortController()
      const aborted = queue.get(controller.signal)
      const next = queue.get()
      const reason = new Error('worker stopping')
      controller.abort(reason)
      await assert.rejects(aborted, (error) => error === reason)
      queue.add('a')
      assert.equal(await next, 'a')
      assert.equal(queue.processingCount(), 1)
    })

    it('refuses to wait with an aborted signal and takes no key', async () => {
      const { queue } = fakeQueue()
      queue.add('a')
      await assert.rejects(queue.get(AbortSignal.abort()), { name: 'AbortError' })
      assert.deepEqual([queue.len(), queue.processingCount()], [1, 0])
    })

    it('delivers a key handed out before the signal aborts', async () => {
      const { queue } = fakeQueue()
      const controller = new AbortController()
      const waiting = queue.get(controller.signal)
      queue.add('a')
      controller.abort()
      assert.equal(await waiting, 'a')
    })
  })

  describe('fair ordering', () => {
    it('delivers a fresh high-priority key before a 5,000-key low backlog drains', async () => {
      const { queue } = fakeQueue()
      // Worst case for the fresh key: the last N keys out were high, so a low key is owed.
      for (let i = 0; i < 4; i++) queue.add(`event-${i}`)
      for (let i = 0; i < 5000; i++) queue.add(`resync-${i}`, { priority: 'low' })
      assert.deepEqual(await drain4(queue), ['event-0', 'event-1', 'event-2', 'event-3'])
      queue.add('fresh')
      const order: string[] = []
      while (!order.includes('fresh') && order.length < 5005) {
        const key = await queue.get()
        assert.ok(key !== undefined)
        order.push(key)
        queue.done(key)
      }
      const position = order.indexOf('fresh') + 1
      assert.ok(position >= 1 && position <= 2, `fresh key was number ${position}`)
      assert.deepEqual(order, ['resync-0', 'fresh'])
      assert.equal(queue.len('low'), 4999)
    })

    it('delivers a fresh key first when no low key is owed, whatever the backlog', async () => {
      const { queue } = fakeQueue()
      for (let i = 0; i < 5000; i++) queue.add(`resync-${i}`, { priority: 'low' })
      assert.equal(await queue.get(), 'resync-0')
      queue.add('fresh')
      assert.equal(await queue.get(), 'fresh')
    })

    it('bounds the position of a fresh high key by h + 1 + floor(h / N), independent of the low backlog', async () => {
      for (const highBurst of [1, 2, 4, 7]) {
        for (const backlog of [1, 50]) {
          for (let h = 0; h <= 12; h++) {
            for (let streak = 0; streak <= highBurst; streak++) {
              const { queue } = fakeQueue({ highBurst })
              // Drive the run of consecutive high keys to `streak` with the low lane empty.
              for (let i = 0; i < streak; i++) queue.add(`warm-${i}`)
              await drain(queue)
              for (let i = 0; i < backlog; i++) queue.add(`low-${i}`, { priority: 'low' })
              for (let i = 0; i < h; i++) queue.add(`high-${i}`)
              queue.add('fresh')
              const order = await drain(queue)
              const before = order.indexOf('fresh')
              const bound = Math.min(h + 1 + Math.floor(h / highBurst), h + backlog)
              assert.ok(before <= bound, `N=${highBurst} h=${h} streak=${streak}: ${before} before`)
            }
          }
        }
      }
    })

    it('hands out one low key per four high keys under sustained events by default', async () => {
      const { queue } = fakeQueue()
      for (let i = 0; i < 100; i++) queue.add(`resync-${i}`, { priority: 'low' })
      let event = 0
      for (let i = 0; i < 5; i++) queue.add(`event-${event++}`)
      const lanes: string[] = []
      for (let i = 0; i < 50; i++) {
        const key = await queue.get()
        assert.ok(key !== undefined)
        lanes.push(key.startsWith('event') ? 'H' : 'L')
        queue.done(key)
        queue.add(`event-${event++}`)
      }
      assert.equal(lanes.join(''), 'HHHHL'.repeat(10))
    })

    it('takes the ratio from highBurst, and starves the low lane only when told to', async () => {
      const { queue } = fakeQueue({ highBurst: 1 })
      const strict = fakeQueue({ highBurst: Infinity }).queue
      for (const q of [queue, strict]) {
        for (let i = 0; i < 3; i++) q.add(`l${i}`, { priority: 'low' })
        for (let i = 0; i < 3; i++) q.add(`h${i}`)
      }
      assert.deepEqual(await drain(queue), ['h0', 'l0', 'h1', 'l1', 'h2', 'l2'])
      assert.deepEqual(await drain(strict), ['h0', 'h1', 'h2', 'l0', 'l1', 'l2'])
    })

    it('promotes a low key re-added with high priority to the tail of the high lane', async () => {
      const { queue } = fakeQueue({ highBurst: Infinity })
      for (const key of ['a', 'b', 'c']) queue.add(key, { priority: 'low' })
      queue.add('x')
      queue.add('c', { priority: 'high' })
      assert.deepEqual([queue.len('high'), queue.len('low')], [2, 2])
      assert.deepEqual(await drain(queue), ['x', 'c', 'a', 'b'])
    })

    it('leaves a key where it is when re-added with the same or a lower priority', async () => {
      const { queue } = fakeQueue({ highBurst: Infinity })
      queue.add('h1')
      queue.add('h2')
      queue.add('l1', { priority: 'low' })
      queue.add('l2', { priority: 'low' })
      queue.add('h1', { priority: 'low' })
      queue.add('l1', { priority: 'low' })
      assert.deepEqual(await drain(queue), ['h1', 'h2', 'l1', 'l2'])
    })

    it('requeues a held key in the high lane when it was re-added with high priority', async () => {
      const { queue } = fakeQueue()
      queue.add('a', { priority: 'low' })
      assert.equal(await queue.get(), 'a')
      queue.add('a', { priority: 'low' })
      queue.add('a', { priority: 'high' })
      queue.done('a')
      assert.deepEqual([queue.len('high'), queue.len('low')], [1, 0])
    })

    it('keeps FIFO order in each lane across thousands of promotions and re-adds', async () => {
      const { queue } = fakeQueue({ highBurst: Infinity })
      const keys = Array.from({ length: 6000 }, (_, i) => `k${i}`)
      for (const key of keys) queue.add(key, { priority: 'low' })
      const promoted = keys.filter((_, i) => i % 3 === 0).reverse()
      for (const key of promoted) queue.add(key)
      // Re-adding the promoted keys to the low lane while their old entries there are still
      // unconsumed must queue them at the tail, not at their old positions.
      const first: string[] = []
      while (queue.len('high') > 0) {
        const key = await queue.get()
        assert.ok(key !== undefined)
        first.push(key)
        queue.done(key)
        queue.add(key, { priority: 'low' })
      }
      assert.deepEqual(first, promoted)
      const rest = keys.filter((_, i) => i % 3 !== 0)
      assert.deepEqual(await drain(queue), [...rest, ...promoted])
    })

    it('refuses a highBurst that is not a positive integer', () => {
      for (const highBurst of [0, -1, 1.5, Number.NaN]) {
        assert.throws(() => new WorkQueue({ highBurst }), RangeError)
      }
    })
  })

  describe('delayed adds', () => {
    it('adds a key only once its delay has passed, in the low lane by default', () => {
      const { clock, queue } = fakeQueue()
      queue.addAfter('a', 100)
      clock.advance(99)
      assert.equal(queue.len(), 0)
      clock.advance(1)
      assert.deepEqual([queue.len('low'), queue.len('high')], [1, 0])
      queue.addAfter('b', 10, { priority: 'high' })
      clock.advance(10)
      assert.equal(queue.len('high'), 1)
    })

    it('addAfter with a shorter delay wins', async () => {
      const { clock, queue } = fakeQueue()
      queue.addAfter('a', 100)
      queue.addAfter('a', 10)
      assert.equal(clock.pendingTimers(), 1, 'the longer timer is cancelled')
      clock.advance(10)
      assert.deepEqual(await drain(queue), ['a'])
      clock.advance(1000)
      assert.equal(queue.len(), 0, 'the replaced delay does not add the key again')
    })

    it('ignores a longer delay for a key that is already waiting', async () => {
      const { clock, queue } = fakeQueue()
      queue.addAfter('a', 10)
      queue.addAfter('a', 100)
      clock.advance(10)
      assert.deepEqual(await drain(queue), ['a'])
      clock.advance(1000)
      assert.equal(queue.len(), 0)
    })

    it('keeps the higher priority of two delayed adds of a key', () => {
      const { clock, queue } = fakeQueue()
      queue.addAfter('a', 10)
      queue.addAfter('a', 100, { priority: 'high' })
      queue.addAfter('b', 100, { priority: 'high' })
      queue.addAfter('b', 10)
      clock.advance(10)
      assert.deepEqual([queue.len('high'), queue.len('low')], [2, 0])
    })

    it('adds at once for a delay of zero or less', () => {
      const { clock, queue } = fakeQueue()
      queue.addAfter('a', 0)
      queue.addAfter('b', -5, { priority: 'high' })
      assert.deepEqual([queue.len('low'), queue.len('high')], [1, 1])
      assert.equal(clock.pendingTimers(), 0)
    })

    it('dedupes a delayed add with a key already queued', async () => {
      const { clock, queue } = fakeQueue()
      queue.add('a')
      queue.addAfter('a', 10)
      clock.advance(10)
      assert.deepEqual(await drain(queue), ['a'])
    })
  })

  describe('rate-limited adds', () => {
    it('backs off a failing key 5 ms, 10 ms, 20 ms and starts over after forget', async () => {
      const { clock, queue } = fakeQueue()
      for (const expectedMs of [5, 10, 20]) {
        queue.addRateLimited('a')
        assert.equal(clock.nextDueInMs(), expectedMs)
        clock.advance(expectedMs)
        assert.deepEqual(await drain(queue), ['a'])
      }
      assert.equal(queue.numRequeues('a'), 3)
      queue.forget('a')
      assert.equal(queue.numRequeues('a'), 0)
      queue.addRateLimited('a')
      assert.equal(clock.nextDueInMs(), 5)
    })

    it('limits retries overall to 10 qps after a burst of 100 by default', () => {
      const { clock, queue } = fakeQueue()
      for (let i = 0; i < 102; i++) queue.addRateLimited(`k${i}`)
      clock.advance(5)
      assert.equal(queue.len(), 100)
      clock.advance(94)
      assert.equal(queue.len(), 100)
      clock.advance(1)
      assert.equal(queue.len(), 101)
      clock.advance(100)
      assert.equal(queue.len(), 102)
    })

    it('waits for the larger of the key back-off and the overall bucket', () => {
      const clock = new FakeClock()
      const queue = new WorkQueue({
        clock,
        backoff: new ExponentialBackoff({ baseMs: 50 }),
        bucket: new TokenBucket({ qps: 10, burst: 2, clock }),
      })
      for (const key of ['a', 'b', 'c', 'd']) queue.addRateLimited(key)
      // a and b get tokens at once and wait out their 50 ms back-off; c and d wait for tokens.
      const lengths: number[] = []
      for (const ms of [49, 1, 49, 1, 99, 1]) {
        clock.advance(ms)
        lengths.push(queue.len())
      }
      assert.deepEqual(lengths, [0, 2, 2, 3, 3, 4])
    })

    it('queues retries in the low lane unless told otherwise', () => {
      const { clock, queue } = fakeQueue()
      queue.addRateLimited('a')
      queue.addRateLimited('b', { priority: 'high' })
      clock.advance(5)
      assert.deepEqual([queue.len('low'), queue.len('high')], [1, 1])
    })
  })

  describe('shutdown', () => {
    it('ignores adds of every kind after shutdown', () => {
      const { clock, queue } = fakeQueue()
      queue.shutdown()
      queue.add('a')
      queue.addAfter('b', 10)
      queue.addRateLimited('c')
      clock.advance(1000)
      assert.equal(queue.len(), 0)
      assert.equal(queue.numRequeues('c'), 0)
      assert.equal(queue.isShuttingDown(), true)
    })

    it('resolves waiting gets with undefined', async () => {
      const { queue } = fakeQueue()
      const waiting = [queue.get(), queue.get()]
      queue.shutdown()
      assert.deepEqual(await Promise.all(waiting), [undefined, undefined])
    })

    it('hands out the keys queued before shutdown, then undefined', async () => {
      const { queue } = fakeQueue()
      queue.add('a')
      queue.add('b', { priority: 'low' })
      queue.shutdown()
      assert.equal(await queue.get(), 'a')
      assert.equal(await queue.get(), 'b')
      assert.equal(await queue.get(), undefined)
      assert.equal(await queue.get(), undefined)
    })

    it('drops delayed adds that are still waiting', () => {
      const { clock, queue } = fakeQueue()
      queue.addAfter('a', 10)
      queue.addRateLimited('b')
      queue.shutdown()
      assert.equal(clock.pendingTimers(), 0)
      clock.advance(1000)
      assert.equal(queue.len(), 0)
    })

    it('drains in-flight keys on shutdown', async () => {
      const { queue } = fakeQueue()
      queue.add('a')
      queue.add('b')
      const [a, b] = [await queue.get(), await queue.get()]
      assert.ok(a !== undefined && b !== undefined)
      const drained = track(queue.shutDownWithDrain())
      queue.add('c')
      assert.equal(queue.len(), 0, 'no new keys while draining')
      queue.done(a)
      await settle()
      assert.equal(drained.settled(), false, 'still waiting for b')
      queue.done(b)
      assert.equal(await drained.promise, true)
      assert.equal(await queue.get(), undefined)
    })

    it('requeues a key re-added before shutdown when its worker is done, and drains it', async () => {
      const { queue } = fakeQueue()
      queue.add('a')
      assert.equal(await queue.get(), 'a')
      queue.add('a')
      const drained = queue.shutDownWithDrain()
      queue.done('a')
      assert.equal(await drained, true)
      assert.equal(await queue.get(), 'a')
      queue.done('a')
      assert.equal(await queue.get(), undefined)
    })

    it('gives up draining after the timeout', async () => {
      const { clock, queue } = fakeQueue()
      queue.add('stuck')
      await queue.get()
      const drained = queue.shutDownWithDrain(1000)
      clock.advance(999)
      await settle()
      clock.advance(1)
      assert.equal(await drained, false)
      queue.done('stuck')
      assert.equal(clock.pendingTimers(), 0)
    })

    it('cancels the drain timeout once drained', async () => {
      const { clock, queue } = fakeQueue()
      queue.add('a')
      await queue.get()
      const drained = queue.shutDownWithDrain(1000)
      queue.done('a')
      assert.equal(await drained, true)
      assert.equal(clock.pendingTimers(), 0)
    })

    it('drains at once when nothing is in flight, however often it is called', async () => {
      const { queue } = fakeQueue()
      queue.add('queued')
      assert.equal(await queue.shutDownWithDrain(), true)
      assert.equal(await queue.shutDownWithDrain(10), true)
      assert.equal(queue.len(), 1, 'queued keys are not waited for')
    })
  })

  describe('metrics', () => {
    it('reports adds, depth, queue and work durations and retries to its hooks', async () => {
      const events: string[] = []
      const metrics: WorkQueueMetrics = {
        onAdd: (key) => events.push(`add ${key}`),
        onGet: (key, waitedMs) => events.push(`get ${key} ${waitedMs}`),
        onDone: (key, workMs) => events.push(`done ${key} ${workMs}`),
        onRetry: (key) => events.push(`retry ${key}`),
        depth: (n) => events.push(`depth ${n}`),
      }
      const { clock, queue } = fakeQueue({ name: 'cc-web', metrics })
      assert.equal(queue.name, 'cc-web')
      queue.add('a')
      queue.add('a')
      queue.add('b', { priority: 'low' })
      clock.advance(30)
      await queue.get()
      queue.add('a')
      clock.advance(50)
      queue.done('a')
      queue.addRateLimited('b')
      assert.deepEqual(events, [
        'add a',
        'depth 1',
        'add b',
        'depth 2',
        'get a 30',
        'depth 1',
        'add a',
        'done a 50',
        'depth 2',
        'retry b',
      ])
      events.length = 0
      assert.equal(await queue.get(), 'a', 'the re-added high key goes before the low one')
      assert.deepEqual(events, ['get a 50', 'depth 1'])
    })

    it('names an unnamed queue with the empty string and records nothing by default', async () => {
      const { queue } = fakeQueue()
      assert.equal(queue.name, '')
      queue.add('a')
      queue.addRateLimited('b')
      const key = await queue.get()
      assert.equal(key, 'a')
      queue.done(key)
    })
  })
})

/** Takes up to four keys, finishing each; used to set up a run of high keys. */
async function drain4(queue: WorkQueue): Promise<string[]> {
  const keys: string[] = []
  for (let i = 0; i < 4; i++) {
    const key = await queue.get()
    if (key === undefined) break
    keys.push(key)
    queue.done(key)
  }
  return keys
}
