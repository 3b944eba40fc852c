import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import { objectKey } from '../../core/object-key.js'
import type { CompositeSyncResponse, ObjectsByType } from '../../api/hook-model.js'
import { upToDateTest } from '../children/child-applier.js'
import { dynamicApplier } from '../children/dynamic-applier.js'
import { setLastApplied } from '../children/dynamic-apply.js'
import { assembleRollout, planRevisionWrites, relativeName } from './assemble-rollout.js'
import type { RevisionAnswer } from './assemble-rollout.js'
import type { ControllerRevision, RevisionChildren } from './controller-revision.js'
import type { RolloutChildRule } from './plan-rollout.js'

const RULES = new Map<string, RolloutChildRule>([
  ['Pod.', { method: 'RollingRecreate', statusChecks: [{ type: 'Ready', status: 'True' }] }],
])

function pod(name: string, image: string, namespace = 'ns'): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec: { image } }
}

function ready(object: KubeObject): KubeObject {
  return {
    ...setLastApplied(object),
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  }
}

/** Objects keyed as the engine keys them: GVK, then the uniform `namespace/name` key. */
function uniform(list: readonly KubeObject[]): ObjectsByType {
  return new Map([['Pod.v1', new Map(list.map((o) => [objectKey(o), o]))]])
}

function revision(name: string, children: RevisionChildren[], rv = '1'): ControllerRevision {
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'ControllerRevision',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: rv },
    parentPatch: { spec: { image: name } },
    children,
  }
}

function answer(
  rev: ControllerRevision,
  children: KubeObject[],
  extra: Partial<CompositeSyncResponse> = {}
): RevisionAnswer {
  return {
    revision: { parent: parentNs, revision: rev, isNew: false },
    response: { status: null, children, resyncAfterMs: 0, finalized: false, ...extra },
    desired: uniform(children),
  }
}

const parentNs: KubeObject = {
  apiVersion: 'ctl.example.com/v1',
  kind: 'CatSet',
  metadata: { name: 'cats', namespace: 'ns', uid: 'u' },
}

const claim = (...names: string[]): RevisionChildren[] => [{ apiGroup: '', kind: 'Pod', names }]

/** The fixtures carry last-applied annotations: the dynamic apply's test fits them. */
const DYNAMIC_UP_TO_DATE = upToDateTest(dynamicApplier)

describe('assembleRollout', () => {
  it('keeps rolling a namespaced parent past its first child (upstream stalls: bare-name lookup)', () => {
    const latest = revision('v2', claim('a'))
    const old = revision('v1', claim('b'))
    const outcome = assembleRollout(
      parentNs,
      [
        answer(latest, [pod('a', 'v2'), pod('b', 'v2')]),
        answer(old, [pod('a', 'v1'), pod('b', 'v1')]),
      ],
      uniform([ready(pod('a', 'v2')), ready(pod('b', 'v1'))]),
      RULES,
      [latest, old],
      DYNAMIC_UP_TO_DATE
    )
    assert.equal(outcome.plan.moved?.name, 'b')
    assert.equal(outcome.plan.waiting, undefined)
  })

  it('sends each child at the revision that claims it, in the latest answer order', () => {
    const latest = revision('v2', claim('a'))
    const old = revision('v1', claim('b', 'c'))
    const outcome = assembleRollout(
      parentNs,
      [
        answer(latest, [pod('a', 'v2'), pod('b', 'v2'), pod('c', 'v2')]),
        answer(old, [pod('a', 'v1'), pod('b', 'v1'), pod('c', 'v1')]),
      ],
      // a is on v2 but not ready yet: nothing moves.
      uniform([setLastApplied(pod('a', 'v2')), ready(pod('b', 'v1')), ready(pod('c', 'v1'))]),
      RULES,
      [latest, old],
      DYNAMIC_UP_TO_DATE
    )
    assert.deepEqual(
      outcome.response.children.map(
        (c) => `${c.metadata.name ?? ''}=${(c['spec'] as { image: string }).image}`
      ),
      ['a=v2', 'b=v1', 'c=v1']
    )
    assert.equal(outcome.plan.waiting?.reason, 'status-check')
  })

  it('adds the Updated condition to a null status, takes the smallest resync, and finalizes only when all agree', () => {
    const latest = revision('v2', claim('a'))
    const old = revision('v1', claim('b'))
    const outcome = assembleRollout(
      parentNs,
      [
        answer(latest, [pod('a', 'v2'), pod('b', 'v2')], { resyncAfterMs: 5000, finalized: true }),
        answer(old, [pod('a', 'v1'), pod('b', 'v1')], {
          status: { ignored: true },
          resyncAfterMs: 2000,
        }),
      ],
      uniform([ready(pod('a', 'v2')), ready(pod('b', 'v1'))]),
      RULES,
      [latest, old],
      DYNAMIC_UP_TO_DATE
    )
    assert.deepEqual(outcome.response.status, {
      conditions: [
        {
          type: 'Updated',
          status: 'False',
          reason: 'RolloutProgressing',
          message: 'updating Pod b',
        },
      ],
    })
    assert.equal(outcome.response.resyncAfterMs, 2000)
    assert.equal(outcome.response.finalized, false)
  })

  it('prunes an old revision left without children and writes only what changed', () => {
    const latest = revision('v2', claim('a'))
    const old = revision('v1', claim('b'))
    const outcome = assembleRollout(
      parentNs,
      [
        answer(latest, [pod('a', 'v2'), pod('b', 'v2')]),
        answer(old, [pod('a', 'v1'), pod('b', 'v1')]),
      ],
      // b already matches v2: it moves at once, and v1 is left empty.
      uniform([ready(pod('a', 'v2')), ready(pod('b', 'v2'))]),
      RULES,
      [latest, old],
      DYNAMIC_UP_TO_DATE
    )
    assert.deepEqual(
      outcome.revisions.map((r) => r.metadata.name),
      ['v2']
    )
    assert.deepEqual(
      outcome.writes.delete.map((r) => r.metadata.name),
      ['v1']
    )
    assert.deepEqual(
      outcome.writes.update.map((r) => r.children),
      [claim('a', 'b')]
    )
    assert.deepEqual(outcome.writes.create, [])
    assert.equal(outcome.response.status?.['conditions'] !== undefined, true)
  })

  it('claims a cluster-scoped parent’s namespaced children by namespace/name', () => {
    const cluster: KubeObject = { ...parentNs, metadata: { name: 'cats', uid: 'u' } }
    const latest = revision('v2', [])
    const outcome = assembleRollout(
      cluster,
      [answer(latest, [pod('a', 'v2', 'x'), pod('a', 'v2', 'y')])],
      uniform([]),
      RULES,
      [],
      DYNAMIC_UP_TO_DATE
    )
    assert.deepEqual(outcome.revisions[0]?.children, claim('x/a', 'y/a'))
    assert.deepEqual(
      outcome.writes.create.map((r) => r.metadata.name),
      ['v2']
    )
  })
})

describe('relativeName', () => {
  it('is the name for a namespaced parent and namespace/name under a cluster-scoped one', () => {
    assert.equal(relativeName('ns', pod('a', 'v')), 'a')
    assert.equal(relativeName('', pod('a', 'v', 'x')), 'x/a')
    assert.equal(
      relativeName('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } }),
      'n'
    )
  })
})

describe('planRevisionWrites', () => {
  it('updates a changed revision carrying the observed resourceVersion', () => {
    const observed = revision('v1', claim('a'), '42')
    const desired = {
      ...revision('v1', claim('a', 'b')),
      metadata: { ...observed.metadata, resourceVersion: '1' },
    }
    const writes = planRevisionWrites([observed], [desired])
    assert.equal(writes.update[0]?.metadata.resourceVersion, '42')
    assert.deepEqual(planRevisionWrites([observed], [observed]), {
      create: [],
      update: [],
      delete: [],
    })
  })
})
