import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import type { ControllerRevision } from './controller-revision.js'
import { parentRevisions, revisionLabels, revisionNamespace } from './parent-revisions.js'
import type { RevisionSettings } from './parent-revisions.js'
import { controllerRevisionName } from './revision-name.js'

const parent: KubeObject = {
  apiVersion: 'ctl.example.com/v1',
  kind: 'CatSet',
  metadata: { name: 'cats', namespace: 'ns', uid: 'u' },
  spec: {
    selector: { matchLabels: { app: 'cats' } },
    template: { metadata: { labels: { app: 'cats', tier: 'web' } }, image: 'v2' },
  },
}

const settings: RevisionSettings = {
  parentResource: 'catsets',
  parentGroup: 'ctl.example.com',
  fieldPaths: ['spec.template'],
  namespace: 'ns',
  labels: { app: 'cats' },
}

function stored(name: string, image: string): ControllerRevision {
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'ControllerRevision',
    metadata: { name, namespace: 'ns' },
    parentPatch: {
      spec: { template: { metadata: { labels: { app: 'cats', tier: 'web' } }, image } },
    },
    children: [{ apiGroup: '', kind: 'Pod', names: ['a'] }],
  }
}

describe('parentRevisions', () => {
  it('makes a new revision for a new parent state, owned by the parent', () => {
    const result = parentRevisions(parent, [], settings)
    assert.equal(result.length, 1)
    const latest = result[0]
    assert.ok(latest)
    assert.equal(latest.isNew, true)
    const patch = { spec: { template: (parent['spec'] as { template: unknown }).template } }
    assert.deepEqual(latest.revision.parentPatch, patch)
    assert.equal(
      latest.revision.metadata.name,
      controllerRevisionName('catsets', 'ctl.example.com', 'u', patch)
    )
    assert.equal(latest.revision.metadata.namespace, 'ns')
    assert.deepEqual(latest.revision.metadata.ownerReferences, [
      {
        apiVersion: 'ctl.example.com/v1',
        kind: 'CatSet',
        name: 'cats',
        uid: 'u',
        controller: true,
        blockOwnerDeletion: true,
      },
    ])
  })

  it('finds the latest among the claimed revisions and rebuilds the older parents', () => {
    const result = parentRevisions(parent, [stored('r1', 'v1'), stored('r2', 'v2')], settings)
    const latest = result[0]
    const old = result[1]
    assert.ok(latest)
    assert.ok(old)
    assert.equal(latest.revision.metadata.name, 'r2')
    assert.equal(latest.isNew, false)
    assert.equal(latest.parent, parent)
    assert.equal(old.revision.metadata.name, 'r1')
    assert.equal((old.parent['spec'] as { template: { image: string } }).template.image, 'v1')
    assert.deepEqual((old.parent['spec'] as { selector: unknown }).selector, {
      matchLabels: { app: 'cats' },
    })
  })
})

describe('revisionLabels', () => {
  it('joins selector and template labels with the parent group and resource', () => {
    assert.deepEqual(
      revisionLabels(parent, {
        selectorLabels: { app: 'cats' },
        useTemplate: true,
        parentGroup: 'ctl.example.com',
        parentResource: 'catsets',
      }),
      {
        app: 'cats',
        tier: 'web',
        'metacontroller.k8s.io/apiGroup': 'ctl.example.com',
        'metacontroller.k8s.io/resource': 'catsets',
      }
    )
  })

  it('uses only controller-uid under generateSelector', () => {
    assert.deepEqual(
      revisionLabels(parent, {
        selectorLabels: { 'controller-uid': 'u' },
        useTemplate: false,
        parentGroup: '',
        parentResource: 'things',
      }),
      {
        'controller-uid': 'u',
        'metacontroller.k8s.io/apiGroup': '',
        'metacontroller.k8s.io/resource': 'things',
      }
    )
  })
})

describe('revisionNamespace', () => {
  it('is the parent namespace, or the configured one for a cluster-scoped parent', () => {
    assert.equal(revisionNamespace(parent, 'metacontroller'), 'ns')
    assert.equal(
      revisionNamespace({ ...parent, metadata: { name: 'c' } }, 'metacontroller'),
      'metacontroller'
    )
  })
})
