import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DECORATOR_CONTROLLER_ANNOTATION } from '../../api/decorator-controller-spec.js'
import type { KubeObject } from '../../core/kube-object.js'
import { ObjectStore } from '../../runtime/informers/object-store.js'
import type { DecoratorSyncResponse } from '../../api/hook-model.js'
import { FakeCluster } from '../../in-memory/fake-cluster.js'
import { fakeResourceInfo } from '../../in-memory/fake-resources.js'
import { silentLogger } from '../../runtime/diagnostics/logger.js'
import { attachmentRules } from './attachment-rules.js'
import { objectKey } from '../../core/object-key.js'
import { syncThroughKind } from '../../../test/support/sync-through-kind.js'
import { decoratorKind } from './decorator-kind.js'
import { observeAttachments } from './sync-decorator-target.js'
import type { DecoratorController } from './sync-decorator-target.js'

const TYPE = 'ConfigMap.v1'

function target(uid: string, namespace = 'ns'): KubeObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: uid, namespace, uid } }
}

function attachment(
  name: string,
  controllerUid: string | undefined,
  decorator = 'deco'
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: 'ns',
      annotations: { [DECORATOR_CONTROLLER_ANNOTATION]: decorator },
      ...(controllerUid === undefined
        ? {}
        : {
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: 'Deployment',
                name: controllerUid,
                uid: controllerUid,
                controller: true,
              },
            ],
          }),
    },
  }
}

/** Target t0's 2 attachments, one of another decorator, and `unrelated` other objects. */
function namespaceWith(unrelated: number): ObjectStore {
  const store = new ObjectStore()
  store.upsert(attachment('mine-1', 't0'))
  store.upsert(attachment('mine-2', 't0'))
  store.upsert(attachment('other-decorator', 't0', 'other'))
  for (let i = 0; i < unrelated; i += 1) {
    // Half are other targets' attachments, half nobody's.
    store.upsert(attachment(`unrelated-${i}`, i % 2 === 0 ? `t${i + 1}` : undefined))
  }
  return store
}

describe('observeAttachments', () => {
  it("lists the target's attachments of this decorator only", () => {
    const observed = observeAttachments(
      'deco',
      [TYPE],
      target('t0'),
      new Map([[TYPE, namespaceWith(10)]])
    )
    assert.deepEqual([...(observed.get(TYPE)?.keys() ?? [])], ['ns/mine-1', 'ns/mine-2'])
  })

  it('visits as many objects with 100× more unrelated objects in the namespace', () => {
    // A complexity check, not a timing: the attachments come from the controller-UID index.
    const visitsWith = (unrelated: number): number => {
      const store = namespaceWith(unrelated)
      observeAttachments('deco', [TYPE], target('t0'), new Map([[TYPE, store]]))
      return store.visits
    }
    const small = visitsWith(100)
    assert.equal(small, 3, "the target's three controlled objects")
    assert.equal(visitsWith(10_000), small)
  })
})

const DEPLOYMENTS = fakeResourceInfo({
  group: 'apps',
  version: 'v1',
  resource: 'deployments',
  kind: 'Deployment',
  namespaced: true,
  subresources: ['status'],
})
const CONFIGMAPS = fakeResourceInfo({
  group: '',
  version: 'v1',
  resource: 'configmaps',
  kind: 'ConfigMap',
  namespaced: true,
})

/** A decorator over a fake cluster whose hooks answer with `answer`. */
function decorator(
  hooks: { sync?: boolean; finalize?: boolean },
  answer: Partial<DecoratorSyncResponse>
) {
  const client = new FakeCluster()
  const calls: string[] = []
  const hook = (name: string) => () => {
    calls.push(name)
    return Promise.resolve({
      labels: {},
      annotations: {},
      status: null,
      attachments: [],
      resyncAfterMs: 0,
      finalized: false,
      ...answer,
    })
  }
  const controller: DecoratorController = {
    name: 'deco',
    object: {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'DecoratorController',
      metadata: { name: 'deco' },
    },
    hooks: {
      ...(hooks.sync === true ? { sync: hook('sync') } : {}),
      ...(hooks.finalize === true ? { finalize: hook('finalize') } : {}),
    },
    finalizer: 'metacontroller.io/decoratorcontroller-deco',
    finalizerEnabled: hooks.finalize === true,
    attachments: attachmentRules('deco', [
      { type: TYPE, ref: CONFIGMAPS.ref, updateMethod: 'InPlace' },
    ]),
  }
  const rule = {
    info: DEPLOYMENTS,
    matches: () => true,
    ignoreStatusChanges: false,
    related: undefined,
  }
  const kind = decoratorKind({
    controller,
    writes: { client },
    rules: [rule],
    resyncPeriodMs: undefined,
    events: { record: () => undefined },
    log: silentLogger,
  })
  // Through the kind, as the parent loop syncs: the key names the target's rule (the only one).
  const sync = (cached: KubeObject) => syncThroughKind(kind, client, `0:${objectKey(cached)}`)
  return { client, calls, sync }
}

describe('a DecoratorController sync', () => {
  it("writes the answer's labels on the target and creates its attachments, marked", async () => {
    const { client, sync } = decorator(
      { sync: true },
      {
        labels: { decorated: 'yes' },
        attachments: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'extra' } }],
      }
    )
    const created = await client.create(DEPLOYMENTS.ref, target('d1'))
    await sync(created)
    assert.equal(client.peek(DEPLOYMENTS.ref, 'd1', 'ns')?.metadata.labels?.['decorated'], 'yes')
    const attachment = client.peek(CONFIGMAPS.ref, 'extra', 'ns')
    assert.equal(attachment?.metadata.annotations?.[DECORATOR_CONTROLLER_ANNOTATION], 'deco')
  })

  it('leaves a target alone when the decorator only has a finalize hook and the target stays', async () => {
    const { client, calls, sync } = decorator({ finalize: true }, { labels: { decorated: 'yes' } })
    const created = await client.create(DEPLOYMENTS.ref, target('d1'))
    await sync(created)
    assert.deepEqual(calls, [])
    assert.equal(
      client.peek(DEPLOYMENTS.ref, 'd1', 'ns')?.metadata.labels?.['decorated'],
      undefined
    )
  })
})
