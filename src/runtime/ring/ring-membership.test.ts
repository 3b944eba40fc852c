import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeList, KubeObject } from '../../core/kube-object.js'
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../kube/api-error.js'
import { FakeClock } from '../clock/fake-clock.js'
import type { HashRing } from './hash-ring.js'
import { HASH_SPACE_END } from './hash-ring.js'
import type { RingClient } from './member-lease.js'
import { RING_LABEL, RING_MEMBER_ANNOTATION as RING_MEMBER } from './member-lease.js'
import { RING_VIEW_ANNOTATION, memberLeaseName } from './member-lease.js'
import { RingMembership } from './ring-membership.js'
import { viewId } from './member-table.js'
import { settle as settleOnce, settleMany } from '../../../test/support/event-loop-turns.js'

const request = { method: 'TEST', path: '/leases' }
const details = (reason: string) => ({ statusCode: 409, reason, request })

/** Leases with resourceVersion checks, as the API server keeps them; one client per member. */
class LeaseStore {
  readonly leases = new Map<string, KubeObject>()
  version = 0
  readonly cut = new Set<string>()
  /** Members whose next write lands but whose answer is lost (a timeout). */
  readonly lostAnswer = new Set<string>()
  /** Writes per member. */
  readonly writes = new Map<string, number>()
  /** What a watch of the Leases delivers: called after every write and delete. */
  onChange: () => void = () => undefined
  /** Runs after a member's list read the Leases, before the list returns. */
  afterList: ((member: string) => Promise<void>) | undefined

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
        return Promise.resolve(copy<T>(this.#store(o, member)))
      },
      update: <T extends KubeObject = KubeObject>(_r: unknown, o: KubeObject): Promise<T> => {
        check()
        const lease = this.leases.get(o.metadata.name ?? '')
        if (lease?.metadata.resourceVersion !== o.metadata.resourceVersion)
          throw new ConflictError('conflict', details('Conflict'))
        const stored = this.#store(o, member)
        if (this.lostAnswer.delete(member)) throw new Error('the operation timed out')
        return Promise.resolve(copy<T>(stored))
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
        this.onChange()
        return Promise.resolve({})
      },
      list: async <T extends KubeObject = KubeObject>(
        _r: unknown,
        options?: { labelSelector?: string }
      ): Promise<KubeList<T>> => {
        check()
        const [key, value] = (options?.labelSelector ?? '').split('=')
        const items = [...this.leases.values()]
          .filter((l) => key === undefined || l.metadata.labels?.[key] === value)
          .map((l) => copy<T>(l))
        await this.afterList?.(member)
        const list: KubeList<T> = { apiVersion: 'v1', kind: 'List', metadata: {}, items }
        return list
      },
    }
  }

  #store(o: KubeObject, member: string): KubeObject {
    this.version++
    const stored = structuredClone({
      ...o,
      metadata: { ...o.metadata, resourceVersion: String(this.version) },
    })
    this.leases.set(o.metadata.name ?? '', stored)
    this.writes.set(member, (this.writes.get(member) ?? 0) + 1)
    this.onChange()
    return stored
  }
}

/** The ring and durations every member of these tests shares (the engine's defaults). */
const RING_OPTIONS = {
  namespace: 'metacontroller',
  ring: 'metacontroller',
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
} as const

/** Hashes spread over the space, to check ownership at. */
const SAMPLES = Array.from({ length: 400 }, (_, i) => (HASH_SPACE_END / 400n) * BigInt(i) + 12345n)

interface Cluster {
  readonly store: LeaseStore
  readonly clock: { now: number }
  readonly members: Map<string, RingMembership>
  readonly drains: string[]
  /** While set, a member's drain waits for this promise (in-flight syncs still running). */
  readonly blocked: Map<string, Promise<void>>
  /** Per member, what each `onServe` reported gained. */
  readonly gained: Map<string, ((hash: bigint) => boolean)[]>
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
  const gained = new Map<string, ((hash: bigint) => boolean)[]>()
  return {
    blocked,
    gained,
    store,
    clock,
    members,
    drains,
    join(identity) {
      const member = new RingMembership({
        client: store.clientFor(identity),
        ...RING_OPTIONS,
        identity,
        now: () => clock.now,
        drain: async () => {
          await blocked.get(identity)
          drains.push(identity)
        },
        onServe: (_ring, hashes) => {
          gained.set(identity, [...(gained.get(identity) ?? []), hashes])
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
  it('serves every hash alone a retry period after its first renewal, as a single engine does', async () => {
    const c = cluster()
    const a = c.join('a')
    assert.equal(a.owns(0n), false, 'nothing is served before the Lease is written')
    await a.tick()
    assert.equal(a.owns(0n), false, 'a replica started alongside may not have written yet')
    c.clock.now += RING_OPTIONS.retryPeriodMs
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

  it('renews in the round after a write whose answer was lost, not a round later', async () => {
    const c = cluster()
    const a = c.join('a')
    await a.tick()
    c.store.lostAnswer.add('a')
    c.clock.now += 2000
    await assert.rejects(a.tick(), /timed out/)
    c.clock.now += 2000
    // The Lease changed since a's last known version (its own write landed): written again.
    await a.tick()
    assert.equal(a.canWrite(), true)
    assert.equal(a.owns(0n), true)
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

interface Served {
  readonly at: number
  readonly ring: HashRing
  readonly gained: (hash: bigint) => boolean
}

/**
 * Members whose own loops ({@link RingMembership.run}) run on a fake clock, each told of every
 * Lease change at once (as its informer would be), plus members driven by hand.
 */
function loopCluster() {
  const store = new LeaseStore()
  const clock = new FakeClock(1_000_000)
  const members = new Map<string, RingMembership>()
  const served = new Map<string, Served[]>()
  const stops = new Map<string, AbortController>()
  const runs: Promise<string>[] = []
  /** When each member's Lease was last written. */
  const lastWrite = new Map<string, number>()
  /** Per member, the identities whose Leases its watch does not deliver (a lagging watch). */
  const hidden = new Map<string, Set<string>>()
  store.onChange = () => {
    for (const m of members.values())
      m.observeLeases(
        [...store.leases.values()].filter(
          (l) => !hidden.get(m.identity)?.has(l.metadata.annotations?.[RING_MEMBER] ?? '')
        )
      )
  }
  const settle = (): Promise<void> => settleMany(40)
  // Answers arrive on a later turn of the event loop, as over a connection.
  const reply = async <T>(call: () => Promise<T>): Promise<T> => {
    await settleOnce()
    return call()
  }
  const client = (identity: string): RingClient => {
    const inner = store.clientFor(identity)
    const written = <T>(call: () => Promise<T>): Promise<T> =>
      reply(call).then((value) => {
        lastWrite.set(identity, clock.now())
        return value
      })
    return {
      get: (r, name, options) => reply(() => inner.get(r, name, options)),
      list: (r, options) => reply(() => inner.list(r, options)),
      delete: (r, name, options) => reply(() => inner.delete(r, name, options)),
      create: (r, o, options) => written(() => inner.create(r, o, options)),
      update: (r, o, options) => written(() => inner.update(r, o, options)),
    }
  }
  return {
    store,
    clock,
    members,
    served,
    lastWrite,
    hidden,
    join(identity: string): RingMembership {
      const log: Served[] = []
      served.set(identity, log)
      const member = new RingMembership({
        client: client(identity),
        ...RING_OPTIONS,
        identity,
        clock,
        drain: () => Promise.resolve(),
        onServe: (ring, gained) => log.push({ at: clock.now(), ring, gained }),
      })
      members.set(identity, member)
      return member
    },
    /** Starts a member's own loop. */
    run(identity: string): void {
      const stop = new AbortController()
      stops.set(identity, stop)
      const member = members.get(identity)
      if (member !== undefined) runs.push(member.run(stop.signal))
    },
    /** Joins each member and starts its loop (members joining in that order, then running). */
    start(...identities: string[]): void {
      for (const identity of identities) this.join(identity)
      for (const identity of identities) this.run(identity)
    },
    /** Ends a member's loop without leaving the ring, as a SIGKILL does. */
    kill(identity: string): void {
      stops.get(identity)?.abort()
    },
    settle,
    /**
     * Moves the clock `ms` forward in `stepMs` steps; `everyStep` runs after each, e.g. to
     * check the time a member starts to serve a ring.
     */
    async advance(ms: number, stepMs = 50, everyStep: () => void = () => undefined) {
      for (let passed = 0; passed < ms; passed += stepMs) {
        clock.advance(stepMs)
        await settle()
        everyStep()
      }
    },
    async stopAll(): Promise<void> {
      for (const stop of stops.values()) stop.abort()
      clock.advance(0)
      await Promise.all(runs)
    },
  }
}

describe('RingMembership loop', () => {
  it('ends a membership that a stalled process could not renew, saying the process stalled', async () => {
    const c = loopCluster()
    const a = c.join('a')
    const stop = new AbortController()
    const running = a.run(stop.signal)
    await c.advance(5_000)
    assert.deepEqual(a.members, ['a'])
    // The process does not run for 12 s (a blocked event loop): its 2 s wait ends 10 s late.
    c.clock.advance(12_000)
    await c.settle()
    const reason = await running
    assert.match(reason, /^failed to renew the ring membership lease within 10000 ms/)
    assert.match(
      reason,
      /last renewal answered in 0 ms; waits between rounds ended up to 1\d{4} ms late/
    )
    assert.deepEqual(a.members, [], 'serves nothing')
  })

  it('drops a crashed member at its Lease expiry on the observer’s clock, not a retry later', async () => {
    const c = loopCluster()
    c.start('a', 'b')
    await c.advance(5_000)
    assert.deepEqual(c.members.get('a')?.members, ['a', 'b'])
    c.kill('b')
    await c.advance(1_000)
    // b's last renewal, which a saw at once.
    const lastSeen = c.lastWrite.get('b') ?? 0
    let dropped: number | undefined
    await c.advance(20_000, 50, () => {
      if (dropped === undefined && c.members.get('a')?.members.join() === 'a')
        dropped = c.clock.now()
    })
    assert.ok(dropped !== undefined, 'b was never dropped')
    assert.ok(dropped >= lastSeen + 15_000, `dropped ${dropped - lastSeen} ms after, before expiry`)
    // The retry period is 2 s; the loop woke for the expiry (50 ms margin, 50 ms steps here).
    assert.ok(
      dropped <= lastSeen + 15_100,
      `dropped ${dropped - lastSeen} ms after b's last renewal`
    )
    await c.stopAll()
  })

  it('agrees at once when another member announces while a round is under way', async () => {
    const c = loopCluster()
    c.join('a')
    const b = c.join('b')
    const dead = c.join('c')
    c.run('a')
    // b and c are driven by hand, so b's announcement can land in the middle of a's round.
    const byHand = async (members: readonly RingMembership[]): Promise<void> => {
      for (const m of members) await m.tick()
    }
    for (let i = 0; i < 3; i++) {
      await byHand([b, dead])
      await c.advance(2_000)
    }
    assert.deepEqual(c.members.get('a')?.members, ['a', 'b', 'c'])
    const expiry = (c.lastWrite.get('c') ?? 0) + 15_000
    // c is dead from now on; b keeps renewing every 2 s until just before c's expiry.
    while (c.clock.now() + 2_000 < expiry) {
      await byHand([b])
      await c.advance(2_000)
    }
    // a's round at c's expiry reads the Leases before b announced, and b announces (drops c)
    // before that list answers: a must not wait a retry period for its next round.
    let announced: number | undefined
    c.store.afterList = async (member) => {
      if (member !== 'a' || announced !== undefined || c.clock.now() < expiry) return
      c.store.afterList = undefined
      await b.tick()
      announced = c.clock.now()
    }
    let agreed: number | undefined
    await c.advance(4_000, 50, () => {
      if (agreed === undefined && c.members.get('a')?.members.join() === 'a,b')
        agreed = c.clock.now()
    })
    assert.ok(announced !== undefined && agreed !== undefined, 'no agreement without c')
    assert.ok(agreed - announced <= 50, `agreed ${agreed - announced} ms after b announced`)
    await c.stopAll()
  })

  it('announces at once a member that a fresh list shows alive but its watch did not', async () => {
    const c = loopCluster()
    c.start('a', 'b', 'x')
    await c.advance(5_000)
    assert.deepEqual(c.members.get('a')?.members, ['a', 'b', 'x'])
    // a's watch stops delivering x's renewals: at x's expiry on a's clock a announces a ring
    // without x, and its list then shows x alive.
    c.hidden.set('a', new Set(['x']))
    const aLease = memberLeaseName('metacontroller', 'a')
    const views: { at: number; view: string }[] = []
    const deliver = c.store.onChange
    c.store.onChange = () => {
      const view = c.store.leases.get(aLease)?.metadata.annotations?.[RING_VIEW_ANNOTATION] ?? ''
      if (views.at(-1)?.view !== view) views.push({ at: c.clock.now(), view })
      deliver()
    }
    await c.advance(20_000)
    const without = views.findIndex((v) => v.view === viewId(['a', 'b']))
    const back = views[without + 1]
    assert.ok(without >= 0 && back !== undefined, JSON.stringify(views))
    assert.equal(back.view, viewId(['a', 'b', 'x']))
    assert.ok(back.at - (views[without]?.at ?? 0) <= 100, 'x announced again a retry later')
    assert.deepEqual(c.members.get('a')?.members, ['a', 'b', 'x'])
    await c.stopAll()
  })

  it('does not start a round for a plain renewal of another member, so renewals do not echo', async () => {
    const c = loopCluster()
    c.start('a', 'b', 'c')
    await c.advance(5_000)
    const before = new Map(c.store.writes)
    await c.advance(20_000, 100)
    for (const id of ['a', 'b', 'c']) {
      const writes = (c.store.writes.get(id) ?? 0) - (before.get(id) ?? 0)
      // One renewal per retry period (2 s) over 20 s.
      assert.ok(writes >= 9 && writes <= 11, `${id} wrote its Lease ${writes} times in 20 s`)
    }
    await c.stopAll()
  })

  it('serves no ring of the members it saw first when others start a moment later', async () => {
    const c = loopCluster()
    c.start('a')
    await c.advance(800)
    c.start('b')
    await c.advance(700)
    c.start('c')
    await c.advance(6_000)
    for (const id of ['a', 'b', 'c']) {
      const rings = (c.served.get(id) ?? []).map((s) => s.ring.members.join(','))
      assert.deepEqual(rings, ['a,b,c'], `${id} served ${JSON.stringify(rings)}`)
    }
    const first = Math.min(...['a', 'b', 'c'].map((id) => c.served.get(id)?.[0]?.at ?? Infinity))
    // a's first renewal happened at once, its hold ends one retry period (2 s) later, and the
    // agreement needs b and c to announce: a round each, started by a's announcement.
    assert.ok(first - 1_000_000 <= 2_200, `first ring served ${first - 1_000_000} ms after start`)
    await c.stopAll()
  })

  it('reports as gained only the hashes it did not own before: all on the first ring', async () => {
    const c = loopCluster()
    c.start('a', 'b')
    await c.advance(5_000)
    const rings = c.served.get('a') ?? []
    const first = rings[0]
    assert.ok(first !== undefined)
    for (const hash of SAMPLES)
      assert.equal(first.gained(hash), first.ring.ownerOf(hash) === 'a', 'first ring: all it owns')
    assert.deepEqual(rings.at(-1)?.ring.members, ['a', 'b'])
    const owned = SAMPLES.filter((h) => c.members.get('a')?.owns(h))
    assert.ok(owned.length > 100 && owned.length < SAMPLES.length)
    c.kill('b')
    await c.advance(20_000)
    const last = rings.at(-1)
    assert.deepEqual(last?.ring.members, ['a'])
    for (const hash of SAMPLES)
      assert.equal(last.gained(hash), !owned.includes(hash), 'gained: b’s hashes, nothing else')
    await c.stopAll()
  })
})
