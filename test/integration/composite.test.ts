// Upstream's composite/ integration scenarios (spec §6), against the real control plane with the
// engine in-process and hooks served over HTTP from this process.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import type {
  CompositeSyncResponse,
  CustomizeRequest,
  CustomizeResponse,
} from '../../src/api/hook-model.js'
import type { ResourceRef } from '../../src/kube/dynamic-client.js'
import { waitFor } from '../../src/testing/index.js'
import {
  CCS,
  EngineFixture,
  NAMESPACES,
  testCrd,
  isolatedComposite,
  TEST_LABEL,
} from '../support/engine-fixture.js'
import { CONFIGMAPS } from '../../src/kube/well-known-resources.js'

const { parentCrd, childCrd, parentObject, ccSpec } = isolatedComposite('CompParent', 'CompChild')
const noStatusCrd = testCrd('CompNoStatus', { status: false })
const JOBS: ResourceRef = { group: 'batch', version: 'v1', resource: 'jobs', namespaced: true }
const RELATED_NAME = 'related-config-map'

interface SyncRequest {
  parent: KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> }
  children: Record<string, Record<string, KubeObject>>
  related: Record<string, Record<string, KubeObject>>
  finalizing: boolean
}

function relatedConfigMap(namespace: string, value: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: RELATED_NAME, namespace },
    data: { value },
  }
}

function childObject(name: string, labels: Record<string, string>): KubeObject {
  return { apiVersion: childCrd.apiVersion, kind: 'CompChild', metadata: { name, labels } }
}

describe('composite controller (upstream composite/ scenarios)', () => {
  let fx: EngineFixture

  before(async () => {
    fx = await EngineFixture.start()
    await fx.crds(parentCrd.crd, childCrd.crd, noStatusCrd.crd)
  })

  after(async () => {
    await fx.stop()
  })

  it('TestSyncWebhook: creates the child a v1 sync hook returns', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const { parent } = body as SyncRequest
      return {
        children: [childObject(parent.metadata.name ?? '', { app: parent.metadata.name ?? '' })],
      }
    })
    await fx.compositeController(`sync-${ns}`, ccSpec(hook.url, ns))
    await fx.client.create(parentCrd.ref, parentObject('p1', ns))
    const child = await fx.waitForObject(childCrd.ref, 'p1', ns)
    assert.equal(child.metadata.labels?.['app'], 'p1')
    const [owner] = child.metadata.ownerReferences ?? []
    assert.ok(owner)
    assert.equal(owner.kind, 'CompParent')
    assert.equal(owner.controller, true)
    assert.equal(owner.blockOwnerDeletion, true)
    const request = hook.requests[0] as SyncRequest
    assert.deepEqual(Object.keys(request.children), ['CompChild.test.metacontroller-ts.dev/v1'])
    assert.equal(request.finalizing, false)
  })

  it('TestCascadingDelete: deletes a Job child the hook stops returning, with background propagation', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const { parent } = body as SyncRequest
      const replicas = Number(parent.spec?.['replicas'] ?? 0)
      if (replicas === 0) return { children: [] }
      return {
        children: [
          {
            apiVersion: 'batch/v1',
            kind: 'Job',
            metadata: { name: parent.metadata.name, labels: { app: parent.metadata.name } },
            spec: {
              template: {
                metadata: { labels: { app: parent.metadata.name } },
                spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] },
              },
            },
          },
        ],
      }
    })
    await fx.compositeController(`cascade-${ns}`, {
      ...ccSpec(hook.url, ns),
      childResources: [{ apiVersion: 'batch/v1', resource: 'jobs' }],
    })
    await fx.client.create(parentCrd.ref, parentObject('jobs', ns, { replicas: 1 }))
    await fx.waitForObject(JOBS, 'jobs', ns)
    await fx.client.patch(
      parentCrd.ref,
      'jobs',
      { spec: { replicas: 0 } },
      { namespace: ns, type: 'merge' }
    )
    await fx.waitForGone(JOBS, 'jobs', ns)
  })

  it('TestResyncAfter: honours resyncAfterSeconds and then quiesces', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const { parent } = body as SyncRequest
      const status = parent.status ?? {}
      if (status['elapsedSeconds'] !== undefined) return { status }
      if (status['resyncStarted'] === undefined) {
        return { status: { resyncStarted: Date.now() }, resyncAfterSeconds: 0.1 }
      }
      return {
        status: {
          ...status,
          elapsedSeconds: (Date.now() - Number(status['resyncStarted'])) / 1000,
        },
      }
    })
    await fx.compositeController(`resync-${ns}`, { ...ccSpec(hook.url, ns), childResources: [] })
    await fx.client.create(parentCrd.ref, parentObject('resync', ns))
    const parent = await fx.waitForObject(
      parentCrd.ref,
      'resync',
      ns,
      (o) => (o['status'] as Record<string, unknown> | undefined)?.['elapsedSeconds'] !== undefined
    )
    const elapsed = Number((parent['status'] as Record<string, unknown>)['elapsedSeconds'])
    assert.ok(elapsed <= 1.0, `resync took ${elapsed} s`)
    // Quiesce: the status with observedGeneration written once, no hot loop.
    const calls = hook.requests.length
    await new Promise((resolve) => setTimeout(resolve, 1500))
    assert.ok(
      hook.requests.length - calls <= 1,
      `${hook.requests.length - calls} more hook calls while idle`
    )
  })

  it('TestFailIfNoStatusSubresourceInParentCRD: reports the missing status subresource in default', async () => {
    const hook = await fx.hook(() => ({}))
    const name = `nostatus-${Date.now()}`
    await fx.compositeController(name, {
      ...ccSpec(hook.url, 'none'),
      parentResource: { apiVersion: noStatusCrd.apiVersion, resource: 'compnostatuss' },
    })
    const event = await fx.waitForEvent(
      'default',
      'SyncError',
      "does not have subresource 'Status' enabled",
      name
    )
    assert.equal((event['involvedObject'] as Record<string, unknown>)['name'], name)
  })

  it('TestClaimAndOrphanChildren: adopts a matching orphan, then releases it when it stops matching', async () => {
    const ns = await fx.namespace()
    // The hook keeps the child only while the engine still presents it as claimed. A switch
    // flipped by the test before relabelling raced with syncs in between: a sync that saw the
    // child still claimed but the switch off deleted it instead of releasing it.
    const hook = await fx.hook((body) => {
      const { parent, children } = body as SyncRequest
      const name = parent.metadata.name ?? ''
      const claimed = children['CompChild.test.metacontroller-ts.dev/v1']?.[name]
      return { children: claimed === undefined ? [] : [childObject(name, { app: name })] }
    })
    await fx.client.create(childCrd.ref, {
      ...childObject('orphan', { app: 'orphan' }),
      metadata: { name: 'orphan', namespace: ns, labels: { app: 'orphan' } },
    })
    await fx.compositeController(`claim-${ns}`, ccSpec(hook.url, ns))
    const parent = await fx.client.create(parentCrd.ref, parentObject('orphan', ns))
    await fx.waitForObject(childCrd.ref, 'orphan', ns, (o) =>
      (o.metadata.ownerReferences ?? []).some(
        (r) => r.uid === parent.metadata.uid && r.controller === true
      )
    )
    await fx.client.patch(
      childCrd.ref,
      'orphan',
      { metadata: { labels: { app: 'other' } } },
      { namespace: ns, type: 'merge' }
    )
    const released = await fx.waitForObject(
      childCrd.ref,
      'orphan',
      ns,
      (o) => (o.metadata.ownerReferences ?? []).length === 0
    )
    assert.equal(released.metadata.labels?.['app'], 'other')
  })

  it('TestSyncWebhookV2: restarts on a spec change to v2 and serves v2 requests', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const { parent, children } = body as SyncRequest
      const name = parent.metadata.name ?? ''
      // v2 keys objects as namespace/name; answer only once the request proves it.
      const keys = Object.keys(children['CompChild.test.metacontroller-ts.dev/v1'] ?? {})
      const v2 = keys.length === 0 || keys.every((k) => k.includes('/'))
      return { children: v2 ? [childObject(name, { app: name, v2: 'yes' })] : [] }
    })
    const ccName = `v2-${ns}`
    await fx.compositeController(ccName, ccSpec(hook.url, ns))
    await fx.client.create(parentCrd.ref, parentObject('v2', ns))
    await fx.waitForObject(childCrd.ref, 'v2', ns)
    await fx.client.patch(
      CCS,
      ccName,
      { spec: { hooks: { sync: { version: 'v2' } } } },
      { type: 'merge' }
    )
    await waitFor(async () => {
      const cc = await fx.client.get(CCS, ccName)
      return (cc['spec'] as { hooks: { sync: { version: string } } }).hooks.sync.version === 'v2'
    })
    const child = await fx.waitForObject(childCrd.ref, 'v2', ns)
    assert.equal(child.metadata.labels?.['app'], 'v2')
    await fx.client.patch(
      parentCrd.ref,
      'v2',
      { spec: { touch: 1 } },
      { namespace: ns, type: 'merge' }
    )
    await waitFor(() =>
      hook.requests.some((r) =>
        Object.keys(
          (r as SyncRequest).children['CompChild.test.metacontroller-ts.dev/v1'] ?? {}
        ).includes(`${ns}/v2`)
      )
    )
  })
})

describe('composite controller with a customize hook (upstream TestCustomizeWebhook*)', () => {
  let fx: EngineFixture

  before(async () => {
    fx = await EngineFixture.start()
    await fx.crds(parentCrd.crd, childCrd.crd)
  })

  after(async () => {
    await fx.stop()
  })

  /**
   * Serves upstream's customize scenario: customize names one ConfigMap of the parent's
   * namespace; the sync hook finds it in `related` (under the key its version uses) and creates
   * `<parent>-related-config-map`, copying the ConfigMap's data.
   */
  async function customizeScenario(
    version: 'v1' | 'v2',
    options: { updateInPlace?: boolean } = {}
  ): Promise<{
    ns: string
    customize: { requests: unknown[] }
    sync: { requests: unknown[] }
  }> {
    const ns = await fx.namespace()
    await fx.client.create(CONFIGMAPS, relatedConfigMap(ns, 'one'))
    const customize = await fx.hook(() => ({
      relatedResources: [
        { apiVersion: 'v1', resource: 'configmaps', namespace: ns, names: [RELATED_NAME] },
      ],
    }))
    // v1 keys related objects by name (same namespace as the parent); v2 by namespace/name.
    const key = version === 'v2' ? `${ns}/${RELATED_NAME}` : RELATED_NAME
    const sync = await fx.hook((body) => {
      const { parent, related } = body as SyncRequest
      const name = parent.metadata.name ?? ''
      const configMap = related['ConfigMap.v1']?.[key]
      if (configMap === undefined) return { children: [] }
      return {
        children: [
          { ...childObject(`${name}-${RELATED_NAME}`, { app: name }), data: configMap['data'] },
        ],
      }
    })
    await fx.compositeController(`customize-${version}-${ns}`, {
      ...ccSpec(sync.url, ns),
      childResources: [
        {
          apiVersion: childCrd.apiVersion,
          resource: 'compchilds',
          ...(options.updateInPlace === true ? { updateStrategy: { method: 'InPlace' } } : {}),
        },
      ],
      hooks: {
        sync: { version, webhook: { url: sync.url } },
        customize: { version, webhook: { url: customize.url } },
      },
    })
    await fx.client.create(parentCrd.ref, parentObject('cust', ns))
    return { ns, customize, sync }
  }

  it('TestCustomizeWebhook: a v1 sync hook sees the related ConfigMap customize names', async () => {
    const { ns, customize, sync } = await customizeScenario('v1')
    const child = await fx.waitForObject(childCrd.ref, `cust-${RELATED_NAME}`, ns)
    assert.deepEqual(child['data'], { value: 'one' })
    const asked = customize.requests[0] as Record<string, unknown>
    assert.deepEqual(Object.keys(asked).sort(), ['controller', 'parent'])
    const request = sync.requests.find(
      (r) => (r as SyncRequest).related['ConfigMap.v1']?.[RELATED_NAME] !== undefined
    ) as SyncRequest
    assert.deepEqual(Object.keys(request.related), ['ConfigMap.v1'])
    const sent = request.related['ConfigMap.v1']?.[RELATED_NAME]
    assert.equal(sent?.kind, 'ConfigMap')
    assert.equal(sent.apiVersion, 'v1')
  })

  it('TestCustomizeWebhookV2: a v2 sync hook sees it under namespace/name', async () => {
    const { ns } = await customizeScenario('v2')
    const child = await fx.waitForObject(childCrd.ref, `cust-${RELATED_NAME}`, ns)
    assert.deepEqual(child['data'], { value: 'one' })
  })

  it('re-syncs the parent when a related object changes, without calling customize again', async () => {
    const { ns, customize } = await customizeScenario('v2', { updateInPlace: true })
    await fx.waitForObject(childCrd.ref, `cust-${RELATED_NAME}`, ns)
    await fx.client.patch(
      CONFIGMAPS,
      RELATED_NAME,
      { data: { value: 'two' } },
      { namespace: ns, type: 'merge' }
    )
    await fx.waitForObject(
      childCrd.ref,
      `cust-${RELATED_NAME}`,
      ns,
      (o) => (o['data'] as Record<string, unknown> | undefined)?.['value'] === 'two'
    )
    // The answer is cached per parent UID and generation: a related change does not re-ask.
    assert.equal(customize.requests.length, 1)
  })

  it('passes in-process customize rules to an in-process sync hook (internal uniform keys)', async () => {
    const ns = await fx.namespace()
    await fx.client.create(CONFIGMAPS, relatedConfigMap(ns, 'in-process'))
    const name = `inproc-customize-${ns}`
    const customized: CustomizeRequest[] = []
    await fx.engine.addCompositeController({
      name,
      spec: { ...ccSpec('', ns), hooks: { sync: {}, customize: {} } },
      hooks: {
        customize: (request): Promise<CustomizeResponse> => {
          customized.push(request)
          return Promise.resolve({
            relatedResources: [{ apiVersion: 'v1', resource: 'configmaps', names: [RELATED_NAME] }],
          })
        },
        sync: (request): Promise<CompositeSyncResponse> => {
          const parentName = request.parent.metadata.name ?? ''
          const configMap = request.related.get('ConfigMap.v1')?.get(`${ns}/${RELATED_NAME}`)
          return Promise.resolve({
            status: null,
            children:
              configMap === undefined
                ? []
                : [
                    {
                      ...childObject(`${parentName}-${RELATED_NAME}`, { app: parentName }),
                      data: configMap['data'] ?? null,
                    },
                  ],
            resyncAfterMs: 0,
            finalized: false,
          })
        },
      },
    })
    fx.onTeardown(() => fx.engine.removeCompositeController(name))
    await fx.client.create(parentCrd.ref, parentObject('inproc', ns))
    const child = await fx.waitForObject(childCrd.ref, `inproc-${RELATED_NAME}`, ns)
    assert.deepEqual(child['data'], { value: 'in-process' })
    assert.equal(customized[0]?.parent.metadata.name, 'inproc')
  })

  it('selects related objects across namespaces by namespaceSelector for a v2 customize hook', async () => {
    const ns = await fx.namespace()
    const other = await fx.namespace()
    await fx.client.patch(
      NAMESPACES,
      other,
      { metadata: { labels: { [TEST_LABEL]: ns } } },
      { type: 'merge' }
    )
    // Labelled, so that other ConfigMaps of a real cluster (kube-root-ca.crt) stay out.
    const labelled = relatedConfigMap(other, 'elsewhere')
    await fx.client.create(CONFIGMAPS, {
      ...labelled,
      metadata: { ...labelled.metadata, labels: { related: 'yes' } },
    })
    const customize = await fx.hook(() => ({
      relatedResources: [
        {
          apiVersion: 'v1',
          resource: 'configmaps',
          namespaceSelector: { matchLabels: { [TEST_LABEL]: ns } },
          labelSelector: { matchLabels: { related: 'yes' } },
        },
      ],
    }))
    const sync = await fx.hook((body) => {
      const { parent, related } = body as SyncRequest
      const name = parent.metadata.name ?? ''
      const keys = Object.keys(related['ConfigMap.v1'] ?? {}).sort()
      return {
        children: [{ ...childObject(name, { app: name }), data: { related: keys.join(',') } }],
      }
    })
    await fx.compositeController(`nssel-${ns}`, {
      ...ccSpec(sync.url, ns),
      childResources: [
        {
          apiVersion: childCrd.apiVersion,
          resource: 'compchilds',
          updateStrategy: { method: 'InPlace' },
        },
      ],
      hooks: {
        sync: { version: 'v2', webhook: { url: sync.url } },
        customize: { version: 'v2', webhook: { url: customize.url } },
      },
    })
    await fx.client.create(parentCrd.ref, parentObject('nssel', ns))
    await fx.waitForObject(
      childCrd.ref,
      'nssel',
      ns,
      (o) =>
        (o['data'] as Record<string, unknown> | undefined)?.['related'] ===
        `${other}/${RELATED_NAME}`
    )
  })
})

describe('composite controller with a target label selector', () => {
  let fx: EngineFixture

  before(async () => {
    fx = await EngineFixture.start({ targetLabelSelector: 'foo=bar' })
    await fx.crds(parentCrd.crd, childCrd.crd)
  })

  after(async () => {
    await fx.stop()
  })

  it('TestWithMatchingController: serves a CompositeController labelled foo=bar', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const name = (body as SyncRequest).parent.metadata.name ?? ''
      return { children: [childObject(name, { app: name })] }
    })
    await fx.compositeController(`match-${ns}`, ccSpec(hook.url, ns), { foo: 'bar' })
    await fx.client.create(parentCrd.ref, parentObject('matching', ns))
    await fx.waitForObject(childCrd.ref, 'matching', ns)
  })

  it('TestWithNonMatchingController: ignores a CompositeController labelled baz=caz', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const name = (body as SyncRequest).parent.metadata.name ?? ''
      return { children: [childObject(name, { app: name })] }
    })
    await fx.compositeController(`nomatch-${ns}`, ccSpec(hook.url, ns), { baz: 'caz' })
    await fx.client.create(parentCrd.ref, parentObject('ignored', ns))
    await assert.rejects(
      fx.waitForObject(childCrd.ref, 'ignored', ns, () => true, { timeoutMs: 5000 }),
      /timed out/
    )
    assert.equal(hook.requests.length, 0)
  })
})
