import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import type { StatusConditionCheck, UpdateMethod } from '../../api/controller-spec-fields.js'
import { setLastApplied } from '../children/dynamic-apply.js'
import type { RevisionChildren } from './controller-revision.js'
import { upToDateTest } from '../children/child-applier.js'
import { dynamicApplier } from '../children/dynamic-applier.js'
import { checkChildStatus, planRollout } from './plan-rollout.js'
import type {
  RelativeObjects,
  RevisionState,
  RolloutChildRule,
  RolloutInput,
  RolloutPlan,
} from './plan-rollout.js'

const POD = 'Pod.'
const READY: StatusConditionCheck[] = [{ type: 'Ready', status: 'True' }]

function pod(name: string, image: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' }, spec: { image } }
}

/** A pod as the cluster holds it after the engine created it from `pod(name, image)`. */
function observedPod(
  name: string,
  image: string,
  ready?: boolean,
  extra: Partial<KubeObject> = {}
): KubeObject {
  const created = setLastApplied(pod(name, image))
  return {
    ...created,
    ...extra,
    metadata: { ...created.metadata, uid: `uid-${name}`, generation: 1, ...extra.metadata },
    ...(ready === undefined
      ? {}
      : { status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } }),
  }
}

function objects(list: readonly KubeObject[]): RelativeObjects {
  return new Map([[POD, new Map(list.map((o) => [o.metadata.name ?? '', o]))]])
}

function claims(...names: string[]): RevisionChildren[] {
  return names.length === 0 ? [] : [{ apiGroup: '', kind: 'Pod', names }]
}

function rules(
  method: UpdateMethod = 'RollingRecreate',
  statusChecks = READY
): Map<string, RolloutChildRule> {
  return new Map([[POD, { method, statusChecks }]])
}

const order = (...names: string[]) => names.map((name) => ({ apiGroup: '', kind: 'Pod', name }))

/** Latest wants image v2 for a, b, c; the old revision wanted v1. */
function revisions(
  latestClaims: RevisionChildren[],
  oldClaims: RevisionChildren[]
): [RevisionState, RevisionState] {
  return [
    {
      name: 'rev-new',
      children: latestClaims,
      desired: objects(['a', 'b', 'c'].map((n) => pod(n, 'v2'))),
    },
    {
      name: 'rev-old',
      children: oldClaims,
      desired: objects(['a', 'b', 'c'].map((n) => pod(n, 'v1'))),
    },
  ]
}

/** Plans with the dynamic apply's up-to-date test, which the fixtures' last-applied pods match. */
function planDynamic(input: Omit<RolloutInput, 'isUpToDate'>): RolloutPlan {
  return planRollout({ ...input, isUpToDate: upToDateTest(dynamicApplier) })
}

describe('planRollout', () => {
  it('gives every unclaimed rolling child to the latest revision and reports OnLatestRevision', () => {
    const plan = planDynamic({
      revisions: [revisions([], [])[0]],
      latestOrder: order('a', 'b', 'c'),
      observed: objects([]),
      rules: rules(),
    })
    assert.deepEqual(plan.claims, [claims('a', 'b', 'c')])
    assert.equal(plan.moved, undefined)
    assert.deepEqual(plan.condition, {
      type: 'Updated',
      status: 'True',
      reason: 'OnLatestRevision',
      message: 'latest ControllerRevision: rev-new',
    })
  })

  it('moves only the first child in hook order after a spec change', () => {
    const plan = planDynamic({
      revisions: revisions([], claims('a', 'b', 'c')),
      latestOrder: order('b', 'a', 'c'),
      observed: objects(['a', 'b', 'c'].map((n) => observedPod(n, 'v1', true))),
      rules: rules(),
    })
    assert.deepEqual(plan.moved, { apiGroup: '', kind: 'Pod', name: 'b', from: 'rev-old' })
    assert.deepEqual(plan.claims, [claims('b'), claims('a', 'c')])
    assert.equal(plan.condition.reason, 'RolloutProgressing')
    assert.equal(plan.condition.message, 'updating Pod b')
  })

  it('waits while a child on the latest revision fails a status check, naming it', () => {
    const plan = planDynamic({
      revisions: revisions(claims('a'), claims('b', 'c')),
      latestOrder: order('a', 'b', 'c'),
      observed: objects([
        observedPod('a', 'v2', false),
        observedPod('b', 'v1'),
        observedPod('c', 'v1'),
      ]),
      rules: rules(),
    })
    assert.equal(plan.moved, undefined)
    assert.equal(plan.waiting?.reason, 'status-check')
    assert.deepEqual(plan.claims, [claims('a'), claims('b', 'c')])
    assert.deepEqual(plan.condition, {
      type: 'Updated',
      status: 'False',
      reason: 'RolloutWaiting',
      message: 'child Pod a failed status check: "Ready" condition status is "False" (want "True")',
    })
  })

  it('moves the next child once the updated one passes its checks', () => {
    const plan = planDynamic({
      revisions: revisions(claims('a'), claims('b', 'c')),
      latestOrder: order('a', 'b', 'c'),
      observed: objects([
        observedPod('a', 'v2', true),
        observedPod('b', 'v1'),
        observedPod('c', 'v1'),
      ]),
      rules: rules(),
    })
    assert.equal(plan.moved?.name, 'b')
    assert.deepEqual(plan.claims, [claims('a', 'b'), claims('c')])
  })

  it('moves on without status checks as soon as the child is up to date', () => {
    const plan = planDynamic({
      revisions: revisions(claims('a'), claims('b', 'c')),
      latestOrder: order('a', 'b', 'c'),
      observed: objects([observedPod('a', 'v2'), observedPod('b', 'v1'), observedPod('c', 'v1')]),
      rules: rules('RollingRecreate', []),
    })
    assert.equal(plan.moved?.name, 'b')
  })

  it('waits for a child on the latest revision that is missing or not updated yet', () => {
    const input = {
      revisions: revisions(claims('a'), claims('b', 'c')),
      latestOrder: order('a', 'b', 'c'),
      rules: rules(),
    }
    const missing = planDynamic({ ...input, observed: objects([observedPod('b', 'v1')]) })
    assert.equal(missing.waiting?.reason, 'missing')
    assert.equal(missing.condition.message, 'missing child Pod a')
    const stale = planDynamic({ ...input, observed: objects([observedPod('a', 'v1', true)]) })
    assert.equal(stale.waiting?.reason, 'not-updated')
    assert.equal(stale.condition.message, 'child Pod a is not updated yet')
  })

  it('waits for a RollingInPlace child whose observedGeneration is behind, but not one without it', () => {
    const behind = observedPod('a', 'v2', true, { metadata: { name: 'a', generation: 3 } })
    behind['status'] = { observedGeneration: 2, conditions: [{ type: 'Ready', status: 'True' }] }
    const input = {
      revisions: revisions(claims('a'), claims('b', 'c')),
      latestOrder: order('a', 'b', 'c'),
      rules: rules('RollingInPlace'),
    }
    assert.equal(
      planDynamic({ ...input, observed: objects([behind]) }).waiting?.reason,
      'stale-generation'
    )
    const unknown = observedPod('a', 'v2', true, { metadata: { name: 'a', generation: 3 } })
    assert.equal(planDynamic({ ...input, observed: objects([unknown]) }).moved?.name, 'b')
  })

  it('moves a child that already matches the latest state at once (no pass wasted)', () => {
    const plan = planDynamic({
      revisions: revisions([], claims('a', 'b', 'c')),
      latestOrder: order('a', 'b', 'c'),
      observed: objects([observedPod('a', 'v1'), observedPod('b', 'v2'), observedPod('c', 'v1')]),
      rules: rules('RollingRecreate', []),
    })
    assert.deepEqual(plan.adopted, [{ apiGroup: '', kind: 'Pod', name: 'b' }])
    assert.equal(plan.moved?.name, 'a')
    assert.deepEqual(plan.claims, [claims('b', 'a'), claims('c')])
  })

  it('restarts toward the newest revision: children of two old revisions stay put, one moves', () => {
    const [latest] = revisions([], [])
    const plan = planDynamic({
      revisions: [
        latest,
        { name: 'rev-mid', children: claims('a'), desired: objects([pod('a', 'v1.5')]) },
        {
          name: 'rev-old',
          children: claims('b', 'c'),
          desired: objects([pod('b', 'v1'), pod('c', 'v1')]),
        },
      ],
      latestOrder: order('a', 'b', 'c'),
      observed: objects([
        observedPod('a', 'v1.5', true),
        observedPod('b', 'v1'),
        observedPod('c', 'v1'),
      ]),
      rules: rules(),
    })
    assert.deepEqual(plan.moved, { apiGroup: '', kind: 'Pod', name: 'a', from: 'rev-mid' })
    assert.deepEqual(plan.claims, [claims('a'), [], claims('b', 'c')])
  })

  it('drops claims of kinds that no longer roll, of children no longer desired, and duplicates', () => {
    const [latest, old] = revisions(claims('a', 'gone'), [
      { apiGroup: '', kind: 'Pod', names: ['a', 'b'] },
      { apiGroup: '', kind: 'ConfigMap', names: ['x'] },
    ])
    const plan = planDynamic({
      revisions: [latest, old],
      latestOrder: order('a', 'b', 'c'),
      observed: objects(['a', 'b', 'c'].map((n) => observedPod(n, 'v2', true))),
      rules: new Map([...rules(), ['ConfigMap.', { method: 'InPlace', statusChecks: [] }]]),
    })
    // b already matches v2 and c was unclaimed: both go to latest; nothing left to move.
    assert.deepEqual(plan.claims, [claims('a', 'b', 'c'), []])
    assert.equal(plan.condition.reason, 'OnLatestRevision')
  })

  it('ignores children of kinds that do not roll', () => {
    const plan = planDynamic({
      revisions: revisions([], claims('a')),
      latestOrder: order('a'),
      observed: objects([observedPod('a', 'v1')]),
      rules: rules('InPlace'),
    })
    assert.deepEqual(plan.claims, [[], []])
    assert.equal(plan.moved, undefined)
    assert.equal(plan.condition.reason, 'OnLatestRevision')
  })
})

describe('checkChildStatus', () => {
  const child = (conditions: unknown[]): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    status: { conditions },
  })

  it('requires each condition type, with its status and reason when given', () => {
    const checks: StatusConditionCheck[] = [{ type: 'Ready', status: 'True', reason: 'Up' }]
    assert.equal(
      checkChildStatus(checks, child([{ type: 'Ready', status: 'True', reason: 'Up' }])),
      undefined
    )
    assert.equal(checkChildStatus(checks, child([])), 'required condition type missing: "Ready"')
    assert.equal(
      checkChildStatus(checks, child([{ type: 'Ready', status: 'True', reason: 'Down' }])),
      '"Ready" condition reason is "Down" (want "Up")'
    )
    assert.equal(
      checkChildStatus([{ type: 'Ready' }], child([{ type: 'Ready', status: 'False' }])),
      undefined
    )
  })
})
