// Upstream's decorator/ and decorator_with_target_label_selector/ integration scenarios (spec §6),
// against the real control plane with the engine in-process and hooks served over HTTP from this
// process.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import { CONFIGMAPS } from '../../src/kube/well-known-resources.js'
import { waitFor } from '../../src/testing/index.js'
import { DCS, EngineFixture, isolatedDecorator } from '../support/engine-fixture.js'

const { targetCrd, attachmentCrd, targetObject, attachmentObject, dcSpec } = isolatedDecorator(
  'DecTarget',
  'DecAttach'
)
const ATTACHMENT_TYPE = `DecAttach.${attachmentCrd.apiVersion}`
const RELATED_NAME = 'related-config-map'

interface DecoratorRequest {
  controller: KubeObject
  object: KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> }
  attachments: Record<string, Record<string, KubeObject>>
  related: Record<string, Record<string, KubeObject>>
  finalizing: boolean
}

function statusOf(o: KubeObject): Record<string, unknown> | undefined {
  return o['status'] as Record<string, unknown> | undefined
}

describe('decorator controller (upstream decorator/ scenarios)', () => {
  let fx: EngineFixture

  before(async () => {
    fx = await EngineFixture.start()
    await fx.crds(targetCrd.crd, attachmentCrd.crd)
  })

  after(async () => {
    await fx.stop()
  })

  it('TestSyncWebhook: creates the attachment a v1 sync hook returns, controlled by the target and marked with the DecoratorController', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const { object } = body as DecoratorRequest
      return { attachments: [attachmentObject(object.metadata.name ?? '')] }
    })
    const dcName = `sync-${ns}`
    await fx.decoratorController(dcName, dcSpec(hook.url, ns))
    const target = await fx.client.create(targetCrd.ref, targetObject('t1', ns))
    const attachment = await fx.waitForObject(attachmentCrd.ref, 't1', ns)
    const [owner, ...others] = attachment.metadata.ownerReferences ?? []
    assert.ok(owner)
    assert.equal(others.length, 0)
    assert.equal(owner.kind, 'DecTarget')
    assert.equal(owner.apiVersion, targetCrd.apiVersion)
    assert.equal(owner.name, 't1')
    assert.equal(owner.uid, target.metadata.uid)
    assert.equal(owner.controller, true)
    assert.equal(owner.blockOwnerDeletion, true)
    assert.equal(
      attachment.metadata.annotations?.['metacontroller.k8s.io/decorator-controller'],
      dcName
    )
    const request = hook.requests[0] as DecoratorRequest
    assert.deepEqual(Object.keys(request).sort(), [
      'attachments',
      'controller',
      'finalizing',
      'object',
      'related',
    ])
    assert.equal(request.object.metadata.name, 't1')
    assert.equal(request.controller.kind, 'DecoratorController')
    assert.equal(request.controller.metadata.name, dcName)
    assert.deepEqual(Object.keys(request.attachments), [ATTACHMENT_TYPE])
    assert.equal(request.finalizing, false)
    // The next request sees the attachment, keyed by name (v1).
    await fx.client.patch(
      targetCrd.ref,
      't1',
      { spec: { touch: 1 } },
      { namespace: ns, type: 'merge' }
    )
    await waitFor(() =>
      hook.requests.some(
        (r) => (r as DecoratorRequest).attachments[ATTACHMENT_TYPE]?.['t1'] !== undefined
      )
    )
  })

  it('TestResyncAfter: writes status {} over no status, honours resyncAfterSeconds and then quiesces', async () => {
    const ns = await fx.namespace()
    let zero = 0
    const hook = await fx.hook((body) => {
      const { object } = body as DecoratorRequest
      const status = object.status
      if (status === undefined) {
        // The "zero time": an empty status must be written, as a change from no status.
        zero = Date.now()
        return { status: {}, resyncAfterSeconds: 0.1 }
      }
      if (status['elapsedSeconds'] === undefined)
        return { status: { elapsedSeconds: (Date.now() - zero) / 1000 } }
      return { status: null }
    })
    await fx.decoratorController(`resync-${ns}`, { ...dcSpec(hook.url, ns), attachments: [] })
    await fx.client.create(targetCrd.ref, targetObject('resync', ns))
    const target = await fx.waitForObject(
      targetCrd.ref,
      'resync',
      ns,
      (o) => statusOf(o)?.['elapsedSeconds'] !== undefined
    )
    const elapsed = Number(statusOf(target)?.['elapsedSeconds'])
    assert.ok(elapsed <= 1.0, `resync took ${elapsed} s`)
    assert.ok(
      hook.requests.some((r) => (r as DecoratorRequest).object.status !== undefined),
      'a request saw the status {} written by the first sync'
    )
    // Quiesce: no hot loop once the status is settled.
    const calls = hook.requests.length
    await new Promise((resolve) => setTimeout(resolve, 1500))
    assert.ok(
      hook.requests.length - calls <= 1,
      `${hook.requests.length - calls} more hook calls while idle`
    )
  })

  it('TestCustomizeWebhook: a v1 sync hook sees the related ConfigMap customize names', async () => {
    const ns = await fx.namespace()
    await fx.client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: RELATED_NAME, namespace: ns },
      data: { value: 'one' },
    })
    const customize = await fx.hook(() => ({
      relatedResources: [
        { apiVersion: 'v1', resource: 'configmaps', namespace: ns, names: [RELATED_NAME] },
      ],
    }))
    const sync = await fx.hook((body) => {
      const { object, related } = body as DecoratorRequest
      const configMap = related['ConfigMap.v1']?.[RELATED_NAME]
      if (configMap === undefined) return { attachments: [] }
      return {
        attachments: [
          attachmentObject(`${object.metadata.name ?? ''}-${RELATED_NAME}`, {
            ...(configMap['data'] as Record<string, unknown>),
          }),
        ],
      }
    })
    await fx.decoratorController(`customize-${ns}`, {
      ...dcSpec(sync.url, ns),
      hooks: {
        sync: { webhook: { url: sync.url } },
        customize: { webhook: { url: customize.url } },
      },
    })
    await fx.client.create(targetCrd.ref, targetObject('cust', ns))
    const attachment = await fx.waitForObject(attachmentCrd.ref, `cust-${RELATED_NAME}`, ns)
    assert.deepEqual(attachment['data'], { value: 'one' })
    const asked = customize.requests[0] as Record<string, unknown>
    assert.deepEqual(Object.keys(asked).sort(), ['controller', 'parent'])
    assert.equal((asked['parent'] as KubeObject).metadata.name, 'cust')
    const request = sync.requests.find(
      (r) => (r as DecoratorRequest).related['ConfigMap.v1']?.[RELATED_NAME] !== undefined
    ) as DecoratorRequest
    assert.equal(request.object.metadata.name, 'cust')
    assert.deepEqual(Object.keys(request.related), ['ConfigMap.v1'])
    assert.equal(request.related['ConfigMap.v1']?.[RELATED_NAME]?.kind, 'ConfigMap')
  })

  it('TestSyncWebhookV2: restarts on a spec change to v2 and serves v2 requests', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const { object, attachments } = body as DecoratorRequest
      const name = object.metadata.name ?? ''
      // v2 keys objects as namespace/name; answer only once the request proves it.
      const keys = Object.keys(attachments[ATTACHMENT_TYPE] ?? {})
      const v2 = keys.length === 0 || keys.every((k) => k.includes('/'))
      return { attachments: v2 ? [attachmentObject(name, { v2: 'yes' })] : [] }
    })
    const dcName = `v2-${ns}`
    await fx.decoratorController(dcName, dcSpec(hook.url, ns))
    await fx.client.create(targetCrd.ref, targetObject('v2', ns))
    await fx.waitForObject(attachmentCrd.ref, 'v2', ns)
    await fx.client.patch(
      DCS,
      dcName,
      { spec: { hooks: { sync: { version: 'v2' } } } },
      { type: 'merge' }
    )
    await fx.waitForEvent('default', 'Stopped', `Stopped controller: ${dcName}`, dcName)
    await fx.client.patch(
      targetCrd.ref,
      'v2',
      { spec: { touch: 1 } },
      { namespace: ns, type: 'merge' }
    )
    await waitFor(() =>
      hook.requests.some((r) =>
        Object.keys((r as DecoratorRequest).attachments[ATTACHMENT_TYPE] ?? {}).includes(`${ns}/v2`)
      )
    )
    const attachment = await fx.waitForObject(attachmentCrd.ref, 'v2', ns)
    assert.deepEqual(attachment['data'], { v2: 'yes' })
  })
})

describe('decorator controller with a target label selector (upstream decorator_with_target_label_selector/)', () => {
  let fx: EngineFixture

  before(async () => {
    fx = await EngineFixture.start({ targetLabelSelector: 'foo=bar' })
    await fx.crds(targetCrd.crd, attachmentCrd.crd)
  })

  after(async () => {
    await fx.stop()
  })

  it('TestWithMatchingController: serves a DecoratorController labelled foo=bar', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const name = (body as DecoratorRequest).object.metadata.name ?? ''
      return { attachments: [attachmentObject(name)] }
    })
    await fx.decoratorController(`match-${ns}`, dcSpec(hook.url, ns), { foo: 'bar' })
    await fx.client.create(targetCrd.ref, targetObject('matching', ns))
    await fx.waitForObject(attachmentCrd.ref, 'matching', ns)
  })

  it('TestWithNonMatchingController: ignores a DecoratorController labelled baz=caz', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const name = (body as DecoratorRequest).object.metadata.name ?? ''
      return { attachments: [attachmentObject(name)] }
    })
    await fx.decoratorController(`nomatch-${ns}`, dcSpec(hook.url, ns), { baz: 'caz' })
    await fx.client.create(targetCrd.ref, targetObject('ignored', ns))
    await assert.rejects(
      fx.waitForObject(attachmentCrd.ref, 'ignored', ns, () => true, { timeoutMs: 5000 }),
      /timed out/
    )
    assert.equal(hook.requests.length, 0)
  })
})
