import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import type { ObjectClient } from '../../kube/object-client.js'
import { FakeCluster } from '../../in-memory/fake-cluster.js'
import { Action } from '../../runtime/queue/controller-loop.js'
import { silentLogger } from '../../runtime/diagnostics/logger.js'
import type { SyncPlan } from './plan-sync.js'
import { runSync } from './run-sync.js'
import type { SyncResponse, SyncStrategy } from './run-sync.js'
import { observeSync } from './sync-observer.js'
import type { SyncReport } from './sync-observer.js'
import type { RecordedWrite } from './write-recorder.js'

const PARENTS = { group: 'x', version: 'v1', resource: 'ps', namespaced: true }
const MAPS = { group: '', version: 'v1', resource: 'configmaps', namespaced: true }
const PLAN = { desired: new Map(), children: [] } as unknown as SyncPlan
const parent: KubeObject = {
  apiVersion: 'x/v1',
  kind: 'P',
  metadata: { name: 'p', namespace: 'ns' },
}
const map = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns' },
})

type Strategy = SyncStrategy<null, null, SyncResponse, { response: SyncResponse }>

/** A strategy that creates `a`, updates it, deletes `gone`, unless its plan rejects the answer. */
function strategyOn(client: ObjectClient, reject = false) {
  const strategy: Strategy = {
    finalizer: { client, ref: PARENTS, finalizer: 'f' },
    finalizerEnabled: false,
    hooks: { sync: () => Promise.resolve({ resyncAfterMs: 0 }) },
    events: undefined,
    matchesScope: () => true,
    withoutHook: () => Action.awaitChange(),
    observe: () => Promise.resolve(null),
    ask: async (_p, _o, _hook, call) => ({ response: await call(null) }),
    plan: () => {
      if (reject) throw new Error('desired child in another namespace')
      return PLAN
    },
    apply: async () => {
      const created = await client.create(MAPS, map('a'), { namespace: 'ns' })
      await client.update(MAPS, { ...created, data: { x: '1' } }, { namespace: 'ns' })
      await client.delete(MAPS, 'gone', { namespace: 'ns' })
      return true
    },
  }
  return strategy
}

async function seeded(): Promise<FakeCluster> {
  const cluster = new FakeCluster()
  await cluster.create(PARENTS, parent, { namespace: 'ns' })
  await cluster.create(MAPS, map('gone'), { namespace: 'ns' })
  return cluster
}

const about = {
  controller: { kind: 'CompositeController' as const, name: 'c' },
  parent,
  parentRef: PARENTS,
  types: new Map(),
}
const run = (strategy: Strategy) =>
  runSync(strategy, parent, new AbortController().signal, silentLogger)
/** The one report of a sync. */
function only(reports: readonly SyncReport[]): SyncReport {
  assert.equal(reports.length, 1)
  const [report] = reports
  if (report === undefined) throw new Error('no report')
  return report
}
const brief = (writes: readonly RecordedWrite[]) => writes.map((w) => `${w.method} ${w.name}`)

describe('observeSync', () => {
  it('reports the hook, the plan and every write the server accepted, in order', async () => {
    const cluster = await seeded()
    const reports: SyncReport[] = []
    await observeSync((r) => reports.push(r), about, cluster, strategyOn, run)
    const report = only(reports)
    assert.equal(report.hook, 'sync')
    assert.equal(report.plan, PLAN)
    assert.equal(report.error, undefined)
    assert.deepEqual(brief(report.writes), ['create a', 'update a', 'delete gone'])
    assert.equal(report.writes[2]?.namespace, 'ns')
  })

  it('reports a rejected answer with its error, no plan and no write, and rethrows', async () => {
    const cluster = await seeded()
    const reports: SyncReport[] = []
    await assert.rejects(
      observeSync(
        (r) => reports.push(r),
        about,
        cluster,
        (c) => strategyOn(c, true),
        run
      ),
      /another namespace/
    )
    assert.equal(only(reports).hook, 'sync')
    assert.equal(only(reports).plan, undefined)
    assert.match(String(only(reports).error), /another namespace/)
    assert.deepEqual(only(reports).writes, [])
  })

  it('reports a write the server refused with its error', async () => {
    const cluster = await seeded()
    await cluster.create(MAPS, map('a'), { namespace: 'ns' })
    const reports: SyncReport[] = []
    await assert.rejects(observeSync((r) => reports.push(r), about, cluster, strategyOn, run))
    const report = only(reports)
    assert.deepEqual(brief(report.writes), ['create a'])
    assert.match(String(report.writes[0]?.error), /already exists/)
    assert.ok(report.error !== undefined)
  })

  it('gives the strategy its client untouched when nobody observes', async () => {
    const cluster = await seeded()
    let given: unknown
    await observeSync(
      undefined,
      about,
      cluster,
      (client) => {
        given = client
        return strategyOn(client)
      },
      run
    )
    assert.equal(given, cluster)
  })

  it('keeps the sync going when the observer throws', async () => {
    const cluster = await seeded()
    const action = await observeSync(
      () => {
        throw new Error('observer bug')
      },
      about,
      cluster,
      strategyOn,
      run
    )
    assert.deepEqual(action, Action.awaitChange())
  })
})
