import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import type { CompositeSyncResponse } from '../../api/hook-model.js'
import type { ResourceInfo } from '../../kube/resource-map.js'
import { CONTROLLER_REVISIONS } from '../../kube/well-known-resources.js'
import { ObjectStore } from '../../runtime/informers/object-store.js'
import { NotSyncedError } from '../../runtime/queue/reconcile-errors.js'
import { upToDateTest } from '../children/child-applier.js'
import { dynamicApplier } from '../children/dynamic-applier.js'
import { FakeCluster } from '../../in-memory/fake-cluster.js'
import type { ControllerRevision } from './controller-revision.js'
import { claimRevisions, syncRollout, writeRevisions } from './sync-rollout.js'
import type { RolloutContext } from './sync-rollout.js'

const PARENTS = { group: 'ctl.example.com', version: 'v1', resource: 'catsets', namespaced: true }
const parentInfo = {
  ref: PARENTS,
  apiVersion: 'ctl.example.com/v1',
  kind: 'CatSet',
} as unknown as ResourceInfo

const LABELS = {
  app: 'cats',
  'metacontroller.k8s.io/apiGroup': 'ctl.example.com',
  'metacontroller.k8s.io/resource': 'catsets',
}

function revision(name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'ControllerRevision',
    metadata: { name, namespace: 'ns', labels: LABELS, ...extra },
    parentPatch: { spec: { version: name } },
  }
}

async function setup(revisions: KubeObject[]) {
  const cluster = new FakeCluster()
  const parent = await cluster.create(PARENTS, {
    apiVersion: 'ctl.example.com/v1',
    kind: 'CatSet',
    metadata: { name: 'cats', namespace: 'ns' },
    spec: { selector: { matchLabels: { app: 'cats' } }, version: '2' },
  })
  const owner = {
    apiVersion: 'ctl.example.com/v1',
    kind: 'CatSet',
    name: 'cats',
    uid: parent.metadata.uid ?? '',
    controller: true,
  }
  const store = new ObjectStore()
  for (const r of revisions) {
    const owned = r.metadata.ownerReferences?.[0]?.uid === 'PARENT'
    const created = await cluster.create(CONTROLLER_REVISIONS, {
      ...r,
      metadata: { ...r.metadata, ...(owned ? { ownerReferences: [owner] } : {}) },
    })
    store.upsert(created)
  }
  const context: RolloutContext = {
    client: cluster,
    parentInfo,
    revisions: store,
    settings: {
      parentResource: 'catsets',
      parentGroup: 'ctl.example.com',
      fieldPaths: ['spec.version'],
      namespace: 'ns',
      labels: LABELS,
    },
    matchesSelector: (labels) => labels['app'] === 'cats',
    isUpToDate: upToDateTest(dynamicApplier),
    childRules: {
      declaredTypes: new Set(['Pod.v1']),
      namespaced: new Map([['Pod.v1', true]]),
      injectLabels: {},
      matchesSelector: (labels) => labels['app'] === 'cats',
    },
    rolloutRules: new Map([['Pod.', { method: 'RollingRecreate', statusChecks: [] }]]),
  }
  return { cluster, parent, context }
}

const ownedByParent = {
  ownerReferences: [{ apiVersion: 'x', kind: 'x', name: 'x', uid: 'PARENT', controller: true }],
}

describe('claimRevisions', () => {
  it('keeps the parent’s own revisions whatever their labels, adopts matching orphans, ignores the rest', async () => {
    const { cluster, parent, context } = await setup([
      revision('own-unlabelled', { ...ownedByParent, labels: {} }),
      revision('orphan-match'),
      revision('orphan-other-resource', {
        labels: { ...LABELS, 'metacontroller.k8s.io/resource': 'dogsets' },
      }),
      revision('foreign', {
        ownerReferences: [
          { apiVersion: 'x', kind: 'x', name: 'x', uid: 'other', controller: true },
        ],
      }),
    ])
    cluster.clearWrites()
    const claimed = await claimRevisions(context, parent)
    assert.deepEqual(
      claimed.map((r) => r.metadata.name),
      ['orphan-match', 'own-unlabelled']
    )
    assert.deepEqual(
      cluster.writes.map((w) => `${w.method} ${w.name}`),
      ['update orphan-match'],
      'only the orphan is written (adopted); nothing is released'
    )
    assert.equal(
      cluster.peek(CONTROLLER_REVISIONS, 'orphan-match', 'ns')?.metadata.ownerReferences?.[0]?.uid,
      parent.metadata.uid
    )
  })
})

describe('syncRollout', () => {
  const hookFor =
    (calls: string[]) =>
    (state: KubeObject): Promise<CompositeSyncResponse> => {
      const version = (state['spec'] as { version: string }).version
      calls.push(version)
      return Promise.resolve({
        status: null,
        children: ['a', 'b'].map((name) => ({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, labels: { app: 'cats' } },
          data: { version },
        })),
        resyncAfterMs: 0,
        finalized: false,
      })
    }

  it('calls the hook once per revision with the historical parent, and plans the first revision of a new parent', async () => {
    const { parent, context } = await setup([])
    const calls: string[] = []
    const outcome = await syncRollout(
      context,
      parent,
      new Map([['Pod.v1', new Map()]]),
      hookFor(calls)
    )
    assert.deepEqual(calls, ['2'])
    assert.equal(outcome.writes.create.length, 1)
    assert.deepEqual(outcome.writes.create[0]?.children, [
      { apiGroup: '', kind: 'Pod', names: ['a', 'b'] },
    ])
    assert.equal(outcome.plan.condition.reason, 'OnLatestRevision')
  })

  it('rebuilds each older parent from its revision’s patch for the hook', async () => {
    const old = {
      ...revision('1', ownedByParent),
      children: [{ apiGroup: '', kind: 'Pod', names: ['a', 'b'] }],
    }
    const { parent, context } = await setup([old])
    const calls: string[] = []
    const outcome = await syncRollout(
      context,
      parent,
      new Map([['Pod.v1', new Map()]]),
      hookFor(calls)
    )
    assert.deepEqual([...calls].sort(), ['1', '2'])
    // Neither pod is observed, so the first one moves and the rest stays with revision 1.
    assert.equal(outcome.plan.moved?.name, 'a')
    assert.deepEqual(
      outcome.response.children.map((c) => (c['data'] as { version: string }).version),
      ['2', '1']
    )
  })
})

describe('writeRevisions', () => {
  it('deletes with a UID precondition, updates, then creates; a stale update waits for the cache', async () => {
    const { cluster } = await setup([revision('gone'), revision('kept')])
    const gone = cluster.peek(CONTROLLER_REVISIONS, 'gone', 'ns') as ControllerRevision
    const kept = cluster.peek(CONTROLLER_REVISIONS, 'kept', 'ns') as ControllerRevision
    cluster.clearWrites()
    const fresh = { ...(revision('new') as ControllerRevision), parentPatch: {} }
    await writeRevisions(cluster, {
      delete: [gone],
      update: [{ ...kept, children: [{ apiGroup: '', kind: 'Pod', names: ['a'] }] }],
      create: [fresh],
    })
    assert.deepEqual(
      cluster.writes.map((w) => `${w.method} ${w.name}`),
      ['delete gone', 'update kept', 'create new']
    )
    assert.equal(cluster.writes[0]?.preconditions?.uid, gone.metadata.uid)
    await assert.rejects(
      writeRevisions(cluster, { delete: [], update: [kept], create: [] }),
      NotSyncedError
    )
  })
})
