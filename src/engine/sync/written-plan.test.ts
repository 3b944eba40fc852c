import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import { FakeCluster } from '../../in-memory/fake-cluster.js'
import { manageChildren } from '../children/manage-children.js'
import { setLastApplied } from '../children/dynamic-apply.js'
import { planSync } from './plan-sync.js'
import type { SyncRules } from './plan-sync.js'
import { WriteRecorder } from './write-recorder.js'
import { writtenPlan } from './written-plan.js'

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps', namespaced: true }
const PODS = { group: '', version: 'v1', resource: 'pods', namespaced: true }
const PARENT: KubeObject = {
  apiVersion: 'x/v1',
  kind: 'P',
  metadata: { name: 'p', namespace: 'ns', uid: 'p-uid' },
}
const RULES: SyncRules = {
  types: new Map([
    ['ConfigMap.v1', { ref: CONFIGMAPS, updateMethod: 'InPlace' as const }],
    ['Pod.v1', { ref: PODS, updateMethod: 'Recreate' as const }],
  ]),
  declaredTypes: new Set(['ConfigMap.v1', 'Pod.v1']),
  namespaced: new Map([
    ['ConfigMap.v1', true],
    ['Pod.v1', true],
  ]),
  injectLabels: {},
  matchesSelector: () => true,
}

function object(kind: string, name: string, body: Record<string, unknown>): KubeObject {
  return { apiVersion: 'v1', kind, metadata: { name, namespace: 'ns' }, ...body }
}

/** A cluster holding children as the engine wrote them, and the observed map of them. */
async function observedCluster(children: readonly KubeObject[]) {
  const cluster = new FakeCluster()
  const observed = new Map<string, Map<string, KubeObject>>()
  for (const child of children) {
    const ref = child.kind === 'Pod' ? PODS : CONFIGMAPS
    const stored = await cluster.create(ref, setLastApplied(child))
    const type = `${child.kind}.v1`
    const byKey = observed.get(type) ?? new Map<string, KubeObject>()
    byKey.set(`ns/${child.metadata.name ?? ''}`, stored)
    observed.set(type, byKey)
  }
  return { cluster, observed }
}

describe('writtenPlan', () => {
  it('reads each child as the writes carried out the engine plan', async () => {
    const { cluster, observed } = await observedCluster([
      object('ConfigMap', 'same', { data: { k: '1' } }),
      object('ConfigMap', 'changed', { data: { k: '1' } }),
      object('ConfigMap', 'gone', {}),
      object('Pod', 'web', { spec: { image: 'a' } }),
    ])
    const desired = [
      object('ConfigMap', 'same', { data: { k: '1' } }),
      object('ConfigMap', 'changed', { data: { k: '2' } }),
      object('ConfigMap', 'new', {}),
      object('Pod', 'web', { spec: { image: 'b' } }),
    ]
    const plan = planSync(PARENT, observed, desired, RULES)
    const recorder = new WriteRecorder(cluster)
    await manageChildren(plan.children, { client: recorder, types: RULES.types })
    const written = writtenPlan({ plan, types: RULES.types, writes: recorder.writes })
    assert.equal(written.managed, true)
    assert.deepEqual(
      written.entries.map((e) => `${e.op} ${e.type} ${e.key}${e.method ? ` ${e.method}` : ''}`),
      [
        'delete ConfigMap.v1 ns/gone',
        'update ConfigMap.v1 ns/changed InPlace',
        'create ConfigMap.v1 ns/new',
        'recreate Pod.v1 ns/web Recreate',
        'unchanged ConfigMap.v1 ns/same',
      ]
    )
    const update = written.entries.find((e) => e.op === 'update')
    const { written: sent, observed: before } = update ?? {}
    assert.deepEqual(sent?.['data'], { k: '2' }, 'the object the engine sent')
    assert.deepEqual(before?.['data'], { k: '1' }, 'the object observed')
  })

  it('says the children were not managed when the engine wrote none of its steps', async () => {
    const { observed } = await observedCluster([object('ConfigMap', 'gone', {})])
    const plan = planSync(PARENT, observed, [], RULES)
    const written = writtenPlan({ plan, types: RULES.types, writes: [] })
    assert.deepEqual(written, { entries: [], managed: false })
  })
})
