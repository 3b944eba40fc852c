import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { FakeClock } from '../clock/fake-clock.js'
import { SyncLatch } from './sync-latch.js'
import { CacheSyncStalledError, waitForSyncProgress } from './wait-for-sync-progress.js'
import type { SyncProgressSource } from './wait-for-sync-progress.js'

/** A cache whose progress the test drives: `receive()` is a list page, `sync()` the end. */
function fakeCache(description: string, clock: FakeClock) {
  const latch = new SyncLatch()
  let lastAt: number | undefined
  const source: SyncProgressSource = {
    description,
    hasSynced: () => latch.isOpen,
    lastEventAgeMs: () => (lastAt === undefined ? undefined : clock.now() - lastAt),
    waitForSync: (signal) => latch.wait(signal),
  }
  return {
    source,
    receive: () => {
      lastAt = clock.now()
    },
    sync: () => {
      latch.open()
    },
  }
}

const settled = async (p: Promise<unknown>): Promise<string> => {
  const result = await Promise.race([
    p.then(
      () => 'resolved',
      (e: unknown) => (e instanceof Error ? e.name : 'rejected')
    ),
    new Promise<string>((resolve) => {
      setImmediate(() => {
        resolve('pending')
      })
    }),
  ])
  return result
}

describe('waitForSyncProgress', () => {
  it('waits past the stall time for a cache that keeps receiving pages', async () => {
    const clock = new FakeClock()
    const big = fakeCache('configmaps', clock)
    const wait = waitForSyncProgress([big.source], { stallMs: 120_000, clock })
    // Ten minutes of pages, one every 60 s: never 120 s without one.
    for (let i = 0; i < 10; i++) {
      clock.advance(60_000)
      big.receive()
    }
    assert.equal(await settled(wait), 'pending')
    big.sync()
    assert.equal(await settled(wait), 'resolved')
  })

  it('fails naming only the caches that received nothing for the stall time', async () => {
    const clock = new FakeClock()
    const busy = fakeCache('pods', clock)
    const stuck = fakeCache('secrets', clock)
    const done = fakeCache('services', clock)
    done.sync()
    const wait = waitForSyncProgress([busy.source, stuck.source, done.source], {
      stallMs: 120_000,
      clock,
    })
    const outcome = wait.then(
      () => undefined,
      (e: unknown) => e
    )
    for (let i = 0; i < 5; i++) {
      clock.advance(30_000)
      busy.receive()
    }
    const error = await outcome
    assert.ok(error instanceof CacheSyncStalledError)
    assert.deepEqual(error.stalled, ['secrets'])
    assert.match(error.message, /secrets received nothing from the API server for 120 s/)
  })

  it('counts a stall from its last page, not from the start of the wait', async () => {
    const clock = new FakeClock()
    const cache = fakeCache('parents', clock)
    const wait = waitForSyncProgress([cache.source], { stallMs: 120_000, clock })
    clock.advance(100_000)
    cache.receive()
    clock.advance(100_000)
    assert.equal(await settled(wait), 'pending', '100 s after the last page')
    clock.advance(60_000)
    assert.equal(await settled(wait), 'CacheSyncStalledError', '160 s after the last page')
  })

  it('ends with the signal, and leaves no timer behind', async () => {
    const clock = new FakeClock()
    const cache = fakeCache('parents', clock)
    const stop = new AbortController()
    const wait = waitForSyncProgress([cache.source], {
      stallMs: 120_000,
      clock,
      signal: stop.signal,
    })
    stop.abort(new Error('shutting down'))
    await assert.rejects(wait, /shutting down/)
    assert.equal(clock.pendingTimers(), 0)
  })
})
