import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import { Action } from '../../runtime/queue/controller-loop.js'
import type { ParentShard, ShardParticipant } from './parent-shard.js'
import { ShardGuard } from './shard-guard.js'
import { settle } from '../../../test/support/event-loop-turns.js'

/** A parent whose status says it was reconciled at its generation, unless `behind`. */
function parent(name: string, behind = false): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'ns', uid: name, generation: 2 },
    status: { observedGeneration: behind ? 1 : 2 },
  }
}

function setup(owned: Set<string>, behind: ReadonlySet<string> = new Set()) {
  const participants: ShardParticipant[] = []
  const dropped: number[] = []
  const waiting: number[] = []
  const ownedCounts: number[] = []
  const shard: ParentShard = {
    waiting: (_name, count) => waiting.push(count),
    owned: (_name, count) => ownedCounts.push(count),
    owns: (p) => owned.has(p.metadata.name ?? ''),
    register: (p) => {
      participants.push(p)
      return () => participants.splice(participants.indexOf(p), 1)
    },
    dropped: (_name, count) => dropped.push(count),
  }
  const resyncs: (readonly string[])[] = []
  const lanes: Record<string, string[]> = { high: [], low: [] }
  const guard = new ShardGuard({
    shard,
    name: 'test',
    parentOf: (key) => (key.startsWith('gone') ? undefined : parent(key, behind.has(key))),
    allKeys: () => ['a', 'b', 'c', 'd'],
    enqueue: (keys, priority) => {
      if (keys.length > 0) resyncs.push(keys)
      lanes[priority]?.push(...keys)
    },
  })
  return { guard, participants, dropped, resyncs, waiting, ownedCounts, lanes }
}

describe('ShardGuard', () => {
  it('enqueues and syncs only the parents this replica owns, counting the others', async () => {
    const { guard, dropped } = setup(new Set(['a']))
    assert.deepEqual(guard.admit(['a', 'b', 'gone-c']), ['a'])
    assert.deepEqual(dropped, [2])
    let synced = 0
    const sync = () => {
      synced++
      return Promise.resolve(Action.requeue(5))
    }
    assert.deepEqual(await guard.run('a', sync), Action.requeue(5))
    assert.deepEqual(await guard.run('b', sync), Action.awaitChange())
    assert.equal(synced, 1)
  })

  it('lets a failed sync fail to the loop only, and forgets it, so nothing is left unhandled', async () => {
    const owned = new Set(['a'])
    const { guard } = setup(owned)
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason)
    }
    process.on('unhandledRejection', onUnhandled)
    try {
      await assert.rejects(
        guard.run('a', () => Promise.reject(new Error('write refused'))),
        /write refused/
      )
      await settle()
      owned.delete('a')
      await guard.drain()
      assert.deepEqual(unhandled, [])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })

  it('drains: waits for an in-flight sync of a parent no longer owned, not for owned ones', async () => {
    const owned = new Set(['a', 'b'])
    const { guard } = setup(owned)
    let finishA: () => void = () => undefined
    const runningA = guard.run(
      'a',
      () =>
        new Promise<Action>((resolve) => {
          finishA = () => {
            resolve(Action.awaitChange())
          }
        })
    )
    const runningB = guard.run('b', () => new Promise<Action>(() => undefined))
    assert.ok(runningB instanceof Promise)
    // Nothing moved: the drain does not wait for anything.
    await guard.drain()
    owned.delete('a')
    let drained = false
    const draining = guard.drain().then(() => (drained = true))
    await settle()
    assert.equal(drained, false, 'drained while a sync of a moved parent still ran')
    finishA()
    await runningA
    await draining
    assert.equal(drained, true)
  })

  it('registers with the shard while started, so handoffs count, drain and resync it', async () => {
    const { guard, participants, resyncs, waiting } = setup(new Set(['b']))
    guard.start()
    assert.equal(participants.length, 1)
    participants[0]?.handoff((p) => p.metadata.name === 'a')
    assert.deepEqual(waiting, [1], 'the moving parent waits')
    participants[0]?.resync(() => true)
    assert.deepEqual(resyncs, [['b']], 'only the owned parent is enqueued')
    assert.deepEqual(waiting, [1, 0], 'nothing waits once a ring is served')
    await participants[0]?.drain()
    guard.stop()
    assert.equal(participants.length, 0)
  })

  it('re-enqueues only the owned parents it gained after a ring change, counting all it owns', () => {
    const { guard, participants, resyncs, ownedCounts } = setup(new Set(['a', 'b']))
    guard.start()
    // a was owned all along (its events were enqueued); b and c are gained, c is not owned.
    participants[0]?.resync((p) => p.metadata.name !== 'a')
    assert.deepEqual(resyncs, [['b']])
    assert.deepEqual(ownedCounts, [2])
  })

  it('resyncs first the gained parents whose spec the previous owner never reconciled', () => {
    const { guard, participants, lanes } = setup(new Set(['a', 'b', 'c', 'd']), new Set(['c']))
    guard.start()
    participants[0]?.resync(() => true)
    assert.deepEqual(lanes, { high: ['c'], low: ['a', 'b', 'd'] })
  })

  it('a failed sync fails for its caller only: nothing is left unhandled to end the process', async () => {
    const { guard } = setup(new Set(['a']))
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason)
    }
    process.on('unhandledRejection', onUnhandled)
    try {
      await assert.rejects(
        guard.run('a', () => Promise.reject(new Error('hook failed'))),
        /hook failed/
      )
      // Unhandled rejections are reported after the microtask queue drains.
      await settle()
      await guard.drain()
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
    assert.deepEqual(unhandled, [])
  })
})
