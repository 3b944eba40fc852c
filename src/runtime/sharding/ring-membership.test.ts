import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeList, KubeObject } from '../../core/kube-object.js'
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../kube/api-error.js'
import { HASH_SPACE_END } from './hash-ring.js'
import type { RingClient } from './ring-membership.js'
import { RING_LABEL, RingMembership } from './ring-membership.js'

const request = { method: 'TEST', path: '/leases' }
const details = (reason: string) => ({ statusCode: 409, reason, request })

/** Leases with resourceVersion checks, as the API server keeps them; one client per member. */
class LeaseStore {
  readonly leases = new Map<string, KubeObject>()
  version = 0
  readonly cut = new Set<string>()

  clientFor(member: string): RingClient {
    const check = (): void => {
      if (this.cut.has(member)) throw new Error('connection refused')
    }
    // The fake hands out whatever type the caller names, as the dynamic client does.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
    const copy = <T>(o: KubeObject): T => structuredClone(o) as unknown as T
    return {
      get: <T extends KubeObject = KubeObject>(_r: unknown, name: string): Promise<T> => {
        check()
        const lease = this.leases.get(name)
        if (lease === undefined)
          throw new NotFoundError('not found', { ...details('NotFound'), statusCode: 404 })
        return Promise.resolve(copy<T>(lease))
      },
      create: <T extends KubeObject = KubeObject>(_r: unknown, o: KubeObject): Promise<T> => {
        check()
        if (this.leases.has(o.metadata.name ?? ''))
          throw new AlreadyExistsError('exists', details('AlreadyExists'))
        return Promise.resolve(copy<T>(this.#store(o)))
      },
      update: <T extends KubeObject = KubeObject>(_r: unknown, o: KubeObject): Promise<T> => {
        check()
        const lease = this.leases.get(o.metadata.name ?? '')
        if (lease?.metadata.resourceVersion !== o.metadata.resourceVersion)
          throw new ConflictError('conflict', details('Conflict'))
        return Promise.resolve(copy<T>(this.#store(o)))
      },
      delete: (
        _r: unknown,
        name: string,
        options?: { preconditions?: { resourceVersion?: string } }
      ): Promise<unknown> => {
        check()
        const lease = this.leases.get(name)
        const wanted = options?.preconditions?.resourceVersion
        if (lease === undefined)
          throw new NotFoundError('gone', { ...details('NotFound'), statusCode: 404 })
        if (wanted !== undefined && wanted !== lease.metadata.resourceVersion)
          throw new ConflictError('conflict', details('Conflict'))
        this.leases.delete(name)
        return Promise.resolve({})
      },
      list: <T extends KubeObject = KubeObject>(
        _r: unknown,
        options?: { labelSelector?: string }
      ): Promise<KubeList<T>> => {
        check()
        const [key, value] = (options?.labelSelector ?? '').split('=')
        const items = [...this.leases.values()].filter(
          (l) => key === undefined || l.metadata.labels?.[key] === value
        )
        return Promise.resolve({
          apiVersion: 'v1',
          kind: 'List',
          metadata: {},
          items: items.map((l) => copy<T>(l)),
        } as KubeList<T>)
      },
    }
  }

  #store(o: KubeObject): KubeObject {
    this.version++
    const stored = structuredClone({
      ...o,
      metadata: { ...o.metadata, resourceVersion: String(this.version) },
    })
    this.leases.set(o.metadata.name ?? '', stored)
    return stored
  }
}

/** Hashes spread over the space, to check ownership at. */
const SAMPLES = Array.from({ length: 400 }, (_, i) => (HASH_SPACE_END / 400n) * BigInt(i) + 12345n)

interface Cluster {
  readonly store: LeaseStore
  readonly clock: { now: number }
  readonly members: Map<string, RingMembership>
  readonly drains: string[]
  /** While set, a member's drain waits for this promise (in-flight syncs still running). */
  readonly blocked: Map<string, Promise<void>>
  join(identity: string): RingMembership
  /** Every sample hash has at most one owner (the property that matters). */
  assertNoDoubleOwner(): void
  owners(): Map<string, number>
}

function cluster(): Cluster {
  const store = new LeaseStore()
  const clock = { now: 1_000_000 }
  const members = new Map<string, RingMembership>()
  const drains: string[] = []
  const blocked = new Map<string, Promise<void>>()
  return {
    blocked,
    store,
    clock,
    members,
    drains,
    join(identity) {
      const member = new RingMembership({
        client: store.clientFor(identity),
        namespace: 'metacontroller',
        ring: 'metacontroller',
        identity,
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
        now: () => clock.now,
        drain: async () => {
          await blocked.get(identity)
          drains.push(identity)
        },
      })
      members.set(identity, member)
      return member
    },
    assertNoDoubleOwner() {
      for (const hash of SAMPLES) {
        const owners = [...members.values()].filter((m) => m.owns(hash)).map((m) => m.identity)
        assert.ok(owners.length <= 1, `hash ${hash} owned by ${owners.join(', ')}`)
      }
    },
    owners() {
      const counts = new Map<string, number>()
      for (const hash of SAMPLES)
        for (const m of members.values())
          if (m.owns(hash)) counts.set(m.identity, (counts.get(m.identity) ?? 0) + 1)
      return counts
    },
  }
}

/** Runs rounds of every listed member, checking the invariant after each one. */
async function rounds(
  c: Cluster,
  ids: readonly string[],
  count: number,
  stepMs = 2000
): Promise<void> {
  for (let i = 0; i < count; i++) {
    for (const id of ids) {
      // What the member's Lease informer delivers.
      c.members.get(id)?.observeLeases([...c.store.leases.values()])
      await c.members.get(id)?.tick()
      c.assertNoDoubleOwner()
    }
    c.clock.now += stepMs
  }
}

function total(counts: Map<string, number>): number {
  return [...counts.values()].reduce((a, b) => a + b, 0)
}

describe('RingMembership', () => {
  it('serves every hash alone after one round, as a single engine does', async () => {
    const c = cluster()
    const a = c.join('a')
    assert.equal(a.owns(0n), false, 'nothing is served before the Lease is written')
    await a.tick()
    assert.deepEqual(a.members, ['a'])
    assert.equal(c.owners().get('a'), SAMPLES.length)
    assert.equal(c.store.leases.size, 1)
    const lease = [...c.store.leases.values()][0]
    assert.equal(lease?.metadata.labels?.[RING_LABEL], 'metacontroller')
  })

  it('hands hashes to a joining member only after the giver announced it stopped', async () => {
    const c = cluster()
    c.join('a')
    await rounds(c, ['a'], 1)
    c.join('b')
    // b announces first; a has not seen b yet, so b must serve nothing.
    await c.members.get('b')?.tick()
    assert.equal(c.owners().get('b'), undefined)
    c.assertNoDoubleOwner()
    await rounds(c, ['a', 'b'], 3)
    const counts = c.owners()
    assert.equal(total(counts), SAMPLES.length, 'every hash has an owner again')
    assert.ok(
      (counts.get('a') ?? 0) > 100 && (counts.get('b') ?? 0) > 100,
      `split ${JSON.stringify([...counts])}`
    )
    assert.ok(c.drains.includes('a'), 'the giver drained before announcing')
    assert.deepEqual(c.members.get('a')?.members, ['a', 'b'])
  })

  it('gives nothing to a joiner while the giver still drains in-flight syncs', async () => {
    const c = cluster()
    c.join('a')
    await rounds(c, ['a'], 1)
    let finish: () => void = () => undefined
    c.blocked.set('a', new Promise((resolve) => (finish = resolve)))
    c.join('b')
    await c.members.get('b')?.tick()
    c.members.get('a')?.observeLeases([...c.store.leases.values()])
    const aRound = c.members.get('a')?.tick()
    for (let i = 0; i < 3; i++) {
      c.members.get('b')?.observeLeases([...c.store.leases.values()])
      await c.members.get('b')?.tick()
      c.assertNoDoubleOwner()
      c.clock.now += 1000
    }
    assert.equal(c.owners().get('b'), undefined, 'b served before a drained')
    finish()
    await aRound
    await rounds(c, ['a', 'b'], 2)
    assert.ok((c.owners().get('b') ?? 0) > 100)
  })

  it('spreads three members and keeps a single owner through every step of the joins', async () => {
    const c = cluster()
    c.join('a')
    c.join('b')
    c.join('c')
    await rounds(c, ['a', 'b', 'c'], 4)
    const counts = c.owners()
    assert.equal(total(counts), SAMPLES.length)
    for (const id of ['a', 'b', 'c'])
      assert.ok((counts.get(id) ?? 0) > 60, `${id}: ${counts.get(id)}`)
  })

  it('moves a released member’s hashes at once, after it drained', async () => {
    const c = cluster()
    c.join('a')
    c.join('b')
    await rounds(c, ['a', 'b'], 3)
    await c.members.get('b')?.release()
    c.assertNoDoubleOwner()
    assert.equal(c.members.get('b')?.owns(0n), false)
    await rounds(c, ['a'], 1, 0)
    assert.equal(c.owners().get('a'), SAMPLES.length, 'taken over without waiting for expiry')
    assert.equal(c.store.leases.size, 1, 'the released Lease was deleted')
  })

  it('takes a crashed member’s hashes only after its Lease expired on the observer’s clock', async () => {
    const c = cluster()
    c.join('a')
    c.join('b')
    await rounds(c, ['a', 'b'], 3)
    const before = c.owners().get('a') ?? 0
    // b stops renewing (SIGKILL): its hashes stay unserved until 15 s after a last saw it change.
    await rounds(c, ['a'], 6, 2000)
    assert.equal(c.owners().get('a'), before, 'a took b’s hashes before b’s Lease expired')
    await rounds(c, ['a'], 3, 2000)
    assert.equal(c.owners().get('a'), SAMPLES.length)
  })

  it('stops serving when its own Lease cannot be renewed, before the others may take over', async () => {
    const c = cluster()
    c.join('a')
    c.join('b')
    await rounds(c, ['a', 'b'], 3)
    c.store.cut.add('b')
    // b's writes are refused once 10 s passed without a renewal; a waits 15 s after it last saw
    // b's Lease change.
    for (let i = 0; i < 14; i++) {
      await c.members
        .get('b')
        ?.tick()
        .catch(() => undefined)
      c.members.get('a')?.observeLeases([...c.store.leases.values()])
      await c.members.get('a')?.tick()
      c.assertNoDoubleOwner()
      c.clock.now += 2000
    }
    assert.equal(c.members.get('b')?.canWrite(), false)
    assert.equal(c.members.get('b')?.owns(0n), false)
    assert.equal(c.owners().get('a'), SAMPLES.length)
  })

  it('serves nothing again after its renew deadline passed inside one round (a long drain)', async () => {
    const c = cluster()
    c.join('a')
    c.join('b')
    await rounds(c, ['a', 'b'], 3)
    // A third member joins: b narrows and drains, and its drain hangs (slow in-flight syncs).
    c.join('c')
    await c.members.get('c')?.tick()
    let finish: () => void = () => undefined
    c.blocked.set('b', new Promise((resolve) => (finish = resolve)))
    c.members.get('b')?.observeLeases([...c.store.leases.values()])
    const bRound = c.members.get('b')?.tick()
    // a and c see b's Lease unchanged for 15 s and serve a ring without it.
    await rounds(c, ['a', 'c'], 12, 2000)
    assert.deepEqual(c.members.get('a')?.members, ['a', 'c'])
    finish()
    await assert.rejects(Promise.resolve(bRound), /not renewed within 10000 ms/)
    assert.equal(c.owners().get('b'), undefined, 'b serves its old hashes again')
    c.assertNoDoubleOwner()
  })

  it('keeps a member whose Lease was deleted by hand until it would have expired', async () => {
    const c = cluster()
    c.join('a')
    c.join('b')
    await rounds(c, ['a', 'b'], 3)
    const bLease = [...c.store.leases.keys()].find(
      (k) => c.store.leases.get(k)?.metadata.annotations?.['metacontroller.io/ring-member'] === 'b'
    )
    assert.ok(bLease !== undefined)
    c.store.leases.delete(bLease)
    await rounds(c, ['a'], 2)
    assert.notEqual(c.owners().get('a'), SAMPLES.length, 'b may still be writing')
  })
})
