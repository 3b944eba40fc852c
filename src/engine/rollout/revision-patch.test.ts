import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import { applyRevisionPatch, makeRevisionPatch, RevisionPatchError } from './revision-patch.js'

const parent: KubeObject = {
  apiVersion: 'ctl.example.com/v1',
  kind: 'CatSet',
  metadata: { name: 'cats', namespace: 'ns', uid: 'u' },
  spec: { replicas: 3, template: { image: 'v2' }, paused: false },
  status: { ready: 1 },
}

describe('makeRevisionPatch', () => {
  it('keeps only the given field paths, nested as in the parent', () => {
    assert.deepEqual(makeRevisionPatch(parent, ['spec.template']), {
      spec: { template: { image: 'v2' } },
    })
    assert.deepEqual(makeRevisionPatch(parent, ['spec']), { spec: parent['spec'] })
  })

  it('leaves out paths the parent lacks', () => {
    assert.deepEqual(makeRevisionPatch(parent, ['spec.missing', 'spec.replicas']), {
      spec: { replicas: 3 },
    })
  })

  it('refuses a path through a value that is not an object', () => {
    assert.throws(() => makeRevisionPatch(parent, ['spec.replicas.x']), RevisionPatchError)
  })

  it('copies: changing the patch leaves the parent alone', () => {
    const patch = makeRevisionPatch(parent, ['spec.template'])
    ;(patch['spec'] as { template: { image: string } }).template.image = 'changed'
    assert.equal((parent['spec'] as { template: { image: string } }).template.image, 'v2')
  })
})

describe('applyRevisionPatch', () => {
  it('rebuilds the historical parent: patched paths replaced, everything else current', () => {
    const old = applyRevisionPatch(parent, { spec: { template: { image: 'v1' } } }, [
      'spec.template',
      'spec.replicas',
    ])
    assert.deepEqual(old['spec'], { replicas: 3, template: { image: 'v1' }, paused: false })
    assert.deepEqual(old.metadata, parent.metadata)
    assert.deepEqual(old['status'], { ready: 1 })
    assert.deepEqual((parent['spec'] as { template: unknown }).template, { image: 'v2' })
  })

  it('replaces the whole spec with the default field path', () => {
    const old = applyRevisionPatch(parent, { spec: { replicas: 1 } }, ['spec'])
    assert.deepEqual(old['spec'], { replicas: 1 })
  })
})
