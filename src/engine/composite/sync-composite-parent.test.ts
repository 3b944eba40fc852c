import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import { controllerRefOf } from '../../core/owner-references.js'
import { parseCompositeControllerSpec } from '../../api/composite-controller-spec.js'
import type { CompositeSyncRequest, CompositeSyncResponse } from '../../api/hook-model.js'
import { FakeCluster } from '../../in-memory/fake-cluster.js'
import { CONFIGMAPS, WIDGETS } from '../conformance/conformance-resources.js'
import { silentLogger } from '../../runtime/diagnostics/logger.js'
import { objectKey } from '../../core/object-key.js'
import { syncThroughKind } from '../../../test/support/sync-through-kind.js'
import { compositeKind } from './composite-kind.js'

// The conformance suite's resources: widgets with ConfigMap children.
const PARENT = WIDGETS
const CHILD = CONFIGMAPS
const TYPE = 'ConfigMap.v1'

type Answer = (request: CompositeSyncRequest) => Partial<CompositeSyncResponse>

/** A composite controller over a fake cluster whose hook answers with `answer`. */
function setup(answer: Answer) {
  const client = new FakeCluster()
  const requests: CompositeSyncRequest[] = []
  const spec = parseCompositeControllerSpec({
    parentResource: { apiVersion: PARENT.apiVersion, resource: 'widgets' },
    childResources: [{ apiVersion: 'v1', resource: 'configmaps' }],
    hooks: { sync: { webhook: { url: 'http://hook.invalid/sync' } } },
  })
  const kind = compositeKind({
    name: 'w',
    controller: {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: 'w' },
    },
    spec,
    parent: PARENT,
    children: [{ info: CHILD, updateMethod: 'InPlace' }],
    hooks: {
      sync: (request) => {
        requests.push(request)
        return Promise.resolve({
          status: null,
          children: [],
          resyncAfterMs: 0,
          finalized: false,
          ...answer(request),
        })
      },
    },
    finalizerEnabled: false,
    client,
    informers: { acquire: () => assert.fail('no related rules') },
    discovery: { resolveResource: () => assert.fail('no related rules') },
    events: { record: () => undefined },
    log: silentLogger,
    revisionNamespace: 'metacontroller',
  })
  // Through the kind, as the parent loop syncs: the caches are listed from the cluster first.
  const sync = (parent: KubeObject) => syncThroughKind(kind, client, objectKey(parent))
  return { client, requests, sync }
}

const SELECTOR = { matchLabels: { app: 'web' } }

function configMap(name: string, labels: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', labels } }
}

describe('a CompositeController sync', () => {
  it('adopts a matching orphan, sends it to the hook, creates what the hook adds and writes the status', async () => {
    const { client, requests, sync } = setup(() => ({
      children: [configMap('orphan', { app: 'web' }), configMap('new', { app: 'web' })],
      status: { ready: true },
    }))
    await client.create(CHILD.ref, configMap('orphan', { app: 'web' }))
    await client.create(CHILD.ref, configMap('stranger', { app: 'other' }))
    const parent = await client.create(PARENT.ref, {
      apiVersion: PARENT.apiVersion,
      kind: 'Widget',
      metadata: { name: 'p', namespace: 'ns' },
      spec: { selector: SELECTOR },
    })
    await sync(parent)
    assert.deepEqual([...(requests[0]?.children.get(TYPE)?.keys() ?? [])], ['ns/orphan'])
    const children = client.objects(CHILD.ref)
    const owned = children.filter((c) => controllerRefOf(c)?.uid === parent.metadata.uid)
    assert.deepEqual(owned.map((c) => c.metadata.name).sort(), ['new', 'orphan'])
    assert.deepEqual(client.peek(PARENT.ref, 'p', 'ns')?.['status'], {
      ready: true,
      observedGeneration: parent.metadata.generation,
    })
  })

  it('writes nothing when the answer holds a child outside the selector', async () => {
    const { client, sync } = setup(() => ({ children: [configMap('bad', { app: 'other' })] }))
    const parent = await client.create(PARENT.ref, {
      apiVersion: PARENT.apiVersion,
      kind: 'Widget',
      metadata: { name: 'p', namespace: 'ns' },
      spec: { selector: SELECTOR },
    })
    client.clearWrites()
    await assert.rejects(sync(parent), /selector/)
    assert.deepEqual(client.writes, [])
  })
})
