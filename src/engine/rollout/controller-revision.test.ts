import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { addClaim, asControllerRevision, countClaims, removeClaim } from './controller-revision.js'

describe('revision claims', () => {
  it('adds a name under its kind once, starting the kind when needed', () => {
    let claims = addClaim([], '', 'Pod', 'a')
    claims = addClaim(claims, '', 'Pod', 'b')
    claims = addClaim(claims, '', 'Pod', 'a')
    claims = addClaim(claims, 'apps', 'Deployment', 'a')
    assert.deepEqual(claims, [
      { apiGroup: '', kind: 'Pod', names: ['a', 'b'] },
      { apiGroup: 'apps', kind: 'Deployment', names: ['a'] },
    ])
    assert.equal(countClaims(claims), 3)
  })

  it('removes a name, dropping a kind that is left empty', () => {
    const claims = [
      { apiGroup: '', kind: 'Pod', names: ['a', 'b'] },
      { apiGroup: 'apps', kind: 'Deployment', names: ['a'] },
    ]
    assert.deepEqual(removeClaim(claims, '', 'Pod', 'a'), [
      { apiGroup: '', kind: 'Pod', names: ['b'] },
      { apiGroup: 'apps', kind: 'Deployment', names: ['a'] },
    ])
    assert.deepEqual(removeClaim(claims, 'apps', 'Deployment', 'a'), [claims[0]])
    assert.deepEqual(removeClaim(claims, '', 'Pod', 'zzz'), claims)
  })
})

describe('asControllerRevision', () => {
  it('defaults a missing parentPatch and children and drops malformed entries', () => {
    const revision = asControllerRevision({
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'ControllerRevision',
      metadata: { name: 'r' },
      children: [{ apiGroup: '', kind: 'Pod', names: ['a', 3] }, 'junk', { kind: 'Pod' }],
    })
    assert.deepEqual(revision.parentPatch, {})
    assert.deepEqual(revision.children, [{ apiGroup: '', kind: 'Pod', names: ['a'] }])
  })
})
