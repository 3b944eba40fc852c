import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject, OwnerReference } from '../../core/kube-object.js'
import type { AppliedRecord, ApplyDecisionInput } from './decide-server-side-apply.js'
import {
  applyConfiguration,
  configurationHash,
  decideServerSideApply,
  isAppliedIn,
  sanitizeObject,
} from './decide-server-side-apply.js'
import { LAST_APPLIED_ANNOTATION } from './dynamic-apply.js'

const owner: OwnerReference = {
  apiVersion: 'example.com/v1',
  kind: 'Parent',
  name: 'p',
  uid: 'parent-uid',
  controller: true,
  blockOwnerDeletion: true,
}

function configMap(data: Record<string, string>, metadata: Partial<KubeObject['metadata']> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm', namespace: 'ns', ...metadata },
    data,
  } satisfies KubeObject
}

describe('sanitizeObject and applyConfiguration', () => {
  it('drops server-owned metadata, status and the last-applied annotation, not the rest', () => {
    const echoed: KubeObject = {
      ...configMap({ a: '1' }),
      metadata: {
        name: 'cm',
        namespace: 'ns',
        uid: 'u',
        resourceVersion: '7',
        generation: 2,
        creationTimestamp: '2026-01-01T00:00:00Z',
        managedFields: [],
        labels: { app: 'x' },
        annotations: { [LAST_APPLIED_ANNOTATION]: '{}', keep: 'me' },
      },
      status: { phase: 'x' },
    }
    assert.deepEqual(sanitizeObject(echoed), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: 'ns', labels: { app: 'x' }, annotations: { keep: 'me' } },
      data: { a: '1' },
    })
    // The argument is untouched.
    assert.equal(echoed.metadata.resourceVersion, '7')
  })

  it('drops an annotations map that only held the last-applied annotation', () => {
    const sanitized = sanitizeObject(
      configMap({}, { annotations: { [LAST_APPLIED_ANNOTATION]: '' } })
    )
    assert.equal(sanitized.metadata.annotations, undefined)
  })

  it('adds the controller reference unless the parent already owns the object', () => {
    assert.deepEqual(applyConfiguration(configMap({}), owner).metadata.ownerReferences, [owner])
    const other = { ...owner, uid: 'other', controller: false }
    const owned = applyConfiguration(configMap({}, { ownerReferences: [other, owner] }), owner)
    assert.deepEqual(owned.metadata.ownerReferences, [other, owner])
  })

  it('hashes configurations regardless of key order', () => {
    const a = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x' },
      data: { a: '1', b: '2' },
    }
    const b = {
      data: { b: '2', a: '1' },
      metadata: { name: 'x' },
      kind: 'ConfigMap',
      apiVersion: 'v1',
    }
    assert.equal(configurationHash(a), configurationHash(b))
    assert.notEqual(configurationHash(a), configurationHash({ ...a, data: { a: '1' } }))
  })
})

describe('isAppliedIn', () => {
  it('accepts fields the configuration does not set (defaults, other managers)', () => {
    assert.ok(
      isAppliedIn(
        { spec: { ports: [{ port: 80 }] } },
        { spec: { ports: [{ port: 80, protocol: 'TCP' }], clusterIP: '10.0.0.1' } }
      )
    )
  })

  it('sees a changed value, a removed field and a removed label', () => {
    assert.equal(isAppliedIn({ data: { a: '1' } }, { data: { a: '2' } }), false)
    assert.equal(isAppliedIn({ data: { a: '1' } }, { data: {} }), false)
    assert.equal(
      isAppliedIn({ metadata: { labels: { app: 'x' } } }, { metadata: { labels: {} } }),
      false
    )
  })

  it('compares lists item by item, and a list of another length as drift', () => {
    assert.ok(isAppliedIn({ l: [{ a: 1 }, { b: 2 }] }, { l: [{ a: 1, c: 3 }, { b: 2 }] }))
    assert.equal(isAppliedIn({ l: [{ a: 1 }] }, { l: [{ a: 1 }, { b: 2 }] }), false)
    assert.equal(isAppliedIn({ l: [{ b: 2 }, { a: 1 }] }, { l: [{ a: 1 }, { b: 2 }] }), false)
  })

  it('treats a null in the configuration as asking for nothing', () => {
    assert.ok(isAppliedIn({ spec: { x: null } }, { spec: {} }))
    assert.equal(isAppliedIn({ spec: { x: null } }, { spec: { x: 1 } }), false)
  })
})

describe('decideServerSideApply', () => {
  const config = applyConfiguration(configMap({ a: '1' }), owner)
  const hash = configurationHash(config)
  const observed: KubeObject = {
    ...config,
    metadata: { ...config.metadata, uid: 'u1', resourceVersion: '10' },
  }
  const record: AppliedRecord = { uid: 'u1', hash, resourceVersion: '10' }
  const decide = (input: Partial<ApplyDecisionInput>): string => {
    const d = decideServerSideApply({
      observed,
      config,
      hash,
      record,
      method: 'InPlace',
      ...input,
    })
    return d.op === 'skip' ? `skip ${d.reason}` : d.op
  }

  it('creates what is not observed, whatever the method', () => {
    assert.equal(decide({ observed: undefined }), 'create')
    assert.equal(decide({ observed: undefined, method: 'OnDelete' }), 'create')
  })

  it('leaves deleting children and OnDelete children alone', () => {
    const deleting = { ...observed, metadata: { ...observed.metadata, deletionTimestamp: 'now' } }
    assert.equal(decide({ observed: deleting }), 'skip Deleting')
    assert.equal(decide({ method: 'OnDelete', record: undefined }), 'skip OnDelete')
  })

  it('sends nothing when this configuration was applied and the child was not written since', () => {
    assert.equal(decide({}), 'skip Applied')
    assert.equal(decide({ method: 'Recreate' }), 'skip Applied')
    // The informer may still show the version the apply was made over.
    const over = { ...record, resourceVersion: '11', appliedOver: '10' }
    assert.equal(decide({ record: over }), 'skip Applied')
  })

  it('sends nothing when someone else wrote the child but every applied field holds (a status update)', () => {
    const written = { ...observed, metadata: { ...observed.metadata, resourceVersion: '12' } }
    assert.equal(decide({ observed: { ...written, status: { x: 1 } } }), 'skip InSync')
  })

  it('repairs drift of a generation-less object on the next sync (upstream #1177)', () => {
    const drifted = {
      ...observed,
      metadata: { ...observed.metadata, resourceVersion: '12' },
      data: { a: 'edited' },
    }
    assert.equal(decide({ observed: drifted }), 'apply')
    assert.equal(decide({ observed: drifted, method: 'RollingInPlace' }), 'apply')
    assert.equal(decide({ observed: drifted, method: 'Recreate' }), 'dry-run')
  })

  it('repairs metadata-only drift of an object with a generation (a removed label)', () => {
    const labelled = applyConfiguration(configMap({ a: '1' }, { labels: { app: 'x' } }), owner)
    const drifted = {
      ...labelled,
      metadata: {
        ...labelled.metadata,
        uid: 'u1',
        resourceVersion: '12',
        generation: 1,
        labels: {},
      },
    }
    const h = configurationHash(labelled)
    const d = decideServerSideApply({
      observed: drifted,
      config: labelled,
      hash: h,
      record: { uid: 'u1', hash: h, resourceVersion: '10' },
      method: 'InPlace',
    })
    assert.equal(d.op, 'apply')
  })

  it('applies a changed configuration even when the fields still hold it (a field to remove)', () => {
    assert.equal(decide({ record: { ...record, hash: 'older' } }), 'apply')
    assert.equal(decide({ record: { ...record, uid: 'replaced' } }), 'verify')
  })

  it('verifies, rather than applies, a child that holds the configuration after a restart', () => {
    assert.equal(decide({ record: undefined }), 'verify')
    const drifted = { ...observed, data: { a: 'edited' } }
    assert.equal(decide({ record: undefined, observed: drifted }), 'apply')
  })

  it('takes an InPlace child over from the dynamic apply, but never a Recreate one', () => {
    const legacy = {
      ...observed,
      metadata: { ...observed.metadata, annotations: { [LAST_APPLIED_ANNOTATION]: '{}' } },
    }
    assert.equal(decide({ observed: legacy, record: undefined }), 'migrate')
    assert.equal(decide({ observed: legacy, record: undefined, method: 'Recreate' }), 'verify')
  })
})
