import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../kube/api-error.js'
import type { LeaseClient } from './leader-election.js'
import { LeaderElector, leaseRecord, microTime } from './leader-election.js'

const request = { method: 'TEST', path: '/lease' }

/** One Lease with resourceVersion checks, as the API server keeps it. */
class LeaseStore {
  lease: KubeObject | undefined
  version = 0
  failing = false
  readonly client: LeaseClient = {
    get: <T extends KubeObject = KubeObject>(): Promise<T> => {
      if (this.failing) return Promise.reject(new Error('connection refused'))
      if (this.lease === undefined)
        return Promise.reject(
          new NotFoundError('not found', { statusCode: 404, reason: 'NotFound', request })
        )
      return Promise.resolve(structuredClone(this.lease) as T)
    },
    create: <T extends KubeObject = KubeObject>(_ref: unknown, object: KubeObject): Promise<T> => {
      if (this.failing) return Promise.reject(new Error('connection refused'))
      if (this.lease !== undefined)
        return Promise.reject(
          new AlreadyExistsError('exists', { statusCode: 409, reason: 'AlreadyExists', request })
        )
      return Promise.resolve(this.#store(object) as T)
    },
    update: <T extends KubeObject = KubeObject>(_ref: unknown, object: KubeObject): Promise<T> => {
      if (this.failing) return Promise.reject(new Error('connection refused'))
      if (this.lease?.metadata.resourceVersion !== object.metadata.resourceVersion)
        return Promise.reject(
          new ConflictError('conflict', { statusCode: 409, reason: 'Conflict', request })
        )
      return Promise.resolve(this.#store(object) as T)
    },
  }

  #store(object: KubeObject): KubeObject {
    this.version++
    this.lease = structuredClone({
      ...object,
      metadata: { ...object.metadata, resourceVersion: String(this.version) },
    })
    return structuredClone(this.lease)
  }

  holder(): string {
    return this.lease === undefined ? '' : leaseRecord(this.lease).holderIdentity
  }

  /** Stores the Lease again unchanged but for its version, as a write whose answer was lost. */
  landUnseenWrite(): void {
    const lease = this.lease
    assert.ok(lease !== undefined)
    this.#store(lease)
  }

  steal(identity: string): void {
    const lease = this.lease
    assert.ok(lease !== undefined)
    this.#store({ ...lease, spec: { ...(lease['spec'] as object), holderIdentity: identity } })
  }
}

const fast = { leaseDurationMs: 600, renewDeadlineMs: 400, retryPeriodMs: 50 }

function candidate(store: LeaseStore, identity: string) {
  const events: string[] = []
  const elector = new LeaderElector({
    client: store.client,
    namespace: 'default',
    name: 'test',
    identity,
    ...fast,
    onStartedLeading: () => events.push('started'),
    onStoppedLeading: (reason) => events.push(`stopped: ${reason}`),
  })
  const stop = new AbortController()
  const done = elector.run(stop.signal)
  return { elector, events, stop, done }
}

/** A candidate that became the leader. */
async function leader(store: LeaseStore, identity: string) {
  const c = candidate(store, identity)
  await until(() => c.elector.isLeader())
  return c
}

/** A leader whose loop was stopped (as on SIGTERM) and that has not released its Lease yet. */
async function stoppedLeader(store: LeaseStore, identity: string) {
  const c = await leader(store, identity)
  c.stop.abort()
  assert.equal(await c.done, 'stopped')
  return c
}

async function until(check: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('LeaderElector', () => {
  it('formats MicroTime with microseconds', () => {
    assert.equal(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678)), '2026-01-02T03:04:05.678000Z')
  })

  it('rejects durations out of order', () => {
    assert.throws(
      () =>
        new LeaderElector({
          client: new LeaseStore().client,
          namespace: 'n',
          name: 'x',
          leaseDurationMs: 10,
          renewDeadlineMs: 10,
          retryPeriodMs: 2,
        }),
      RangeError
    )
  })

  it('elects exactly one of two candidates, and the other takes over at once after a release', async () => {
    const store = new LeaseStore()
    const a = candidate(store, 'a')
    const b = candidate(store, 'b')
    await until(() => a.elector.isLeader() || b.elector.isLeader())
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.equal(Number(a.elector.isLeader()) + Number(b.elector.isLeader()), 1)
    const [leader, standby] = a.elector.isLeader() ? [a, b] : [b, a]
    assert.equal(store.holder(), leader.elector.identity)
    leader.stop.abort()
    assert.equal(await leader.done, 'stopped')
    const released = Date.now()
    await leader.elector.release()
    assert.notEqual(store.holder(), leader.elector.identity)
    await until(() => standby.elector.isLeader())
    // Far sooner than the 600 ms lease: the release made it free.
    assert.ok(Date.now() - released < 400, `took ${Date.now() - released} ms`)
    assert.deepEqual(leader.events, ['started', 'stopped: released'])
    standby.stop.abort()
    await standby.done
  })

  it('releases the lease even when a renewal it never heard back from landed first', async () => {
    const store = new LeaseStore()
    const a = await stoppedLeader(store, 'a')
    store.landUnseenWrite()
    await a.elector.release()
    assert.equal(store.holder(), '')
    assert.deepEqual(a.events, ['started', 'stopped: released'])
  })

  it('does not release a lease another candidate holds by then', async () => {
    const store = new LeaseStore()
    const a = await stoppedLeader(store, 'a')
    store.steal('b')
    await a.elector.release()
    assert.equal(store.holder(), 'b')
  })

  it('waits out a lease that is not renewed before taking it', async () => {
    const store = new LeaseStore()
    await stoppedLeader(store, 'a')
    const killed = Date.now()
    const b = await leader(store, 'b')
    assert.ok(Date.now() - killed >= 550, `took over after ${Date.now() - killed} ms`)
    assert.ok(store.lease !== undefined)
    assert.equal(leaseRecord(store.lease).leaseTransitions, 1)
    b.stop.abort()
    await b.done
  })

  it('stops leading at once when the lease is stolen', async () => {
    const store = new LeaseStore()
    const a = await leader(store, 'a')
    store.steal('thief')
    const reason = await a.done
    assert.match(reason, /held by thief/)
    assert.equal(a.elector.isLeader(), false)
    assert.equal(store.holder(), 'thief')
    assert.deepEqual(a.events, ['started', 'stopped: the lease is now held by thief'])
  })

  it('stops leading when the lease is deleted', async () => {
    const store = new LeaseStore()
    const a = await leader(store, 'a')
    store.lease = undefined
    assert.equal(await a.done, 'the lease was deleted')
    assert.equal(store.lease, undefined)
  })

  it('gives up before its lease can expire when it cannot renew', async () => {
    const store = new LeaseStore()
    const a = await leader(store, 'a')
    const lastRenew = Date.now()
    store.failing = true
    const reason = await a.done
    const after = Date.now() - lastRenew
    assert.match(reason, /failed to renew the lease within 400 ms/)
    assert.ok(after < fast.leaseDurationMs, `stopped ${after} ms after the last renewal`)
  })
})
