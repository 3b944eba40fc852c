import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import { InvalidDesiredChildError } from '../../api/desired-children.js'
import { planSync } from './plan-sync.js'
import type { SyncRules } from './plan-sync.js'

const TYPE = 'ConfigMap.v1'
const PARENT: KubeObject = {
  apiVersion: 'x/v1',
  kind: 'P',
  metadata: { name: 'p', namespace: 'ns', uid: 'p-uid' },
}
const RULES: SyncRules = {
  types: new Map([
    [
      TYPE,
      {
        ref: { group: '', version: 'v1', resource: 'configmaps', namespaced: true },
        updateMethod: 'InPlace',
      },
    ],
  ]),
  declaredTypes: new Set([TYPE]),
  namespaced: new Map([[TYPE, true]]),
  injectLabels: {},
  matchesSelector: (labels) => labels['app'] === 'web',
}

function configMap(name: string, data: Record<string, string>, labels = { app: 'web' }) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data }
}

describe('planSync', () => {
  it('creates a desired child that is not observed, in the parent namespace', () => {
    const plan = planSync(PARENT, new Map(), [configMap('a', { k: 'v' })], RULES)
    assert.deepEqual(
      plan.children.create.map((s) => s.key),
      ['ns/a']
    )
    assert.equal(plan.children.create[0]?.object.metadata.namespace, 'ns')
  })

  it('deletes an observed child the answer no longer names', () => {
    const observed = { ...configMap('old', {}), metadata: { name: 'old', namespace: 'ns' } }
    const plan = planSync(PARENT, new Map([[TYPE, new Map([['ns/old', observed]])]]), [], RULES)
    assert.deepEqual(
      plan.children.delete.map((s) => s.key),
      ['ns/old']
    )
  })

  it('throws on a desired child that breaks a rule, and changes no argument', () => {
    const desired = [configMap('a', {}, { app: 'other' })]
    const before = structuredClone(desired)
    assert.throws(() => planSync(PARENT, new Map(), desired, RULES), InvalidDesiredChildError)
    assert.deepEqual(desired, before)
  })

  it('throws on a desired child of an undeclared type', () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }
    assert.throws(() => planSync(PARENT, new Map(), [secret], RULES), InvalidDesiredChildError)
  })
})
