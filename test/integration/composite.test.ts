// Upstream's composite/ integration scenarios (spec §6), against the real control plane with the
// engine in-process and hooks served over HTTP from this process.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import type { ResourceRef } from '../../src/kube/dynamic-client.js'
import { waitFor } from '../../src/testing/index.js'
import { CCS, EngineFixture, testCrd } from '../support/engine-fixture.js'

const TEST_LABEL = 'metactl-test'
const parentCrd = testCrd('CompParent')
const childCrd = testCrd('CompChild')
const noStatusCrd = testCrd('CompNoStatus', { status: false })
const JOBS: ResourceRef = { group: 'batch', version: 'v1', resource: 'jobs', namespaced: true }

interface SyncRequest {
  parent: KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> }
  children: Record<string, Record<string, KubeObject>>
  finalizing: boolean
}

function parentObject(
  name: string,
  namespace: string,
  spec: Record<string, unknown> = {}
): KubeObject {
  return {
    apiVersion: parentCrd.apiVersion,
    kind: 'CompParent',
    // Every controller of a test serves only its own test's parents (all share one parent CRD).
    metadata: { name, namespace, labels: { [TEST_LABEL]: namespace } },
    spec: { selector: { matchLabels: { app: name } }, ...spec },
  }
}

function childObject(name: string, labels: Record<string, string>): KubeObject {
  return { apiVersion: childCrd.apiVersion, kind: 'CompChild', metadata: { name, labels } }
}

function ccSpec(
  url: string,
  ns: string,
  extra: Record<string, unknown> = {}
): Record<string, unknown> {
  return {
    parentResource: {
      apiVersion: parentCrd.apiVersion,
      resource: 'compparents',
      labelSelector: { matchLabels: { [TEST_LABEL]: ns } },
    },
    childResources: [{ apiVersion: childCrd.apiVersion, resource: 'compchilds' }],
    hooks: { sync: { webhook: { url } } },
    ...extra,
  }
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
    let returnChild = true
    const hook = await fx.hook((body) => {
      const { parent } = body as SyncRequest
      const name = parent.metadata.name ?? ''
      return { children: returnChild ? [childObject(name, { app: name })] : [] }
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
    returnChild = false
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
