// DecoratorController behaviour beyond upstream's suite, on the real control plane: how the
// hook's answer is merged onto the target, selectors, the finalize flow, the upstream bugs this
// engine fixes (#1062, #948, #1253), cluster-scoped and built-in targets, in-process hooks, and
// safety: a failing or malformed hook changes nothing.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import type { DecoratorSyncRequest, DecoratorSyncResponse } from '../../src/api/hook-model.js'
import { NotFoundError } from '../../src/kube/api-error.js'
import type { ResourceRef } from '../../src/kube/dynamic-client.js'
import { CONFIGMAPS } from '../../src/kube/well-known-resources.js'
import { waitFor } from '../../src/testing/index.js'
import {
  DCS,
  EngineFixture,
  isolatedDecorator,
  TEST_LABEL,
  testCrd,
} from '../support/engine-fixture.js'

const { targetCrd, attachmentCrd, targetObject, attachmentObject, dcSpec } = isolatedDecorator(
  'DbTarget',
  'DbAttach'
)
const noStatusCrd = testCrd('DbNoStatus', { status: false })
const ATTACHMENT_TYPE = `DbAttach.${attachmentCrd.apiVersion}`
const DECORATOR_ANNOTATION = 'metacontroller.k8s.io/decorator-controller'
const RELATED_NAME = 'related-config-map'
const CLUSTER_ROLES: ResourceRef = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  resource: 'clusterroles',
  namespaced: false,
}
const ROLE_BINDINGS: ResourceRef = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  resource: 'rolebindings',
  namespaced: true,
}

interface DecoratorRequest {
  controller: KubeObject
  object: KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> }
  attachments: Record<string, Record<string, KubeObject>>
  related: Record<string, Record<string, KubeObject>>
  finalizing: boolean
}

const asRequest = (body: unknown): DecoratorRequest => body as DecoratorRequest
const nameOf = (body: unknown): string => asRequest(body).object.metadata.name ?? ''
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const finalizerOf = (dc: string): string => `metacontroller.io/decoratorcontroller-${dc}`
const hasFinalizer = (o: KubeObject, finalizer: string): boolean =>
  o.metadata.finalizers?.includes(finalizer) === true

describe('decorator controller behaviour', () => {
  let fx: EngineFixture

  before(async () => {
    fx = await EngineFixture.start()
    await fx.crds(targetCrd.crd, attachmentCrd.crd, noStatusCrd.crd)
  })

  after(async () => {
    await fx.stop()
  })

  /** Drops every finalizer of a target at teardown, so that its namespace can go. */
  function releaseAtTeardown(ref: ResourceRef, name: string, namespace?: string): void {
    fx.onTeardown(async () => {
      const options = namespace === undefined ? {} : { namespace }
      await fx.client
        .patch(ref, name, { metadata: { finalizers: null } }, { ...options, type: 'merge' })
        .catch((error: unknown) => {
          if (!(error instanceof NotFoundError)) throw error
        })
    })
  }

  /** Changes the target so that its controller syncs it again. */
  async function touch(
    name: string,
    ns: string,
    value: string | number = Date.now()
  ): Promise<void> {
    await fx.client.patch(
      targetCrd.ref,
      name,
      { metadata: { annotations: { touched: String(value) } } },
      { namespace: ns, type: 'merge' }
    )
  }

  it('merges labels and annotations from the answer: a string sets, null deletes, unmentioned keys stay', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook(() => ({
      labels: { added: 'by-hook', changed: 'new', dropped: null, absent: null },
      annotations: { 'example.com/added': 'a', 'example.com/dropped': null },
    }))
    await fx.decoratorController(`merge-${ns}`, { ...dcSpec(hook.url, ns), attachments: [] })
    const base = targetObject('merge', ns, {
      annotations: { 'example.com/kept': 'k', 'example.com/dropped': 'd' },
    })
    await fx.client.create(targetCrd.ref, {
      ...base,
      metadata: {
        ...base.metadata,
        labels: { ...base.metadata.labels, kept: 'k', changed: 'old', dropped: 'd' },
      },
    })
    const merged = await fx.waitForObject(
      targetCrd.ref,
      'merge',
      ns,
      (o) => o.metadata.labels?.['added'] === 'by-hook'
    )
    assert.deepEqual(merged.metadata.labels, {
      [TEST_LABEL]: ns,
      kept: 'k',
      changed: 'new',
      added: 'by-hook',
    })
    assert.deepEqual(merged.metadata.annotations, {
      'example.com/kept': 'k',
      'example.com/added': 'a',
    })
    // Converged: a resync writes nothing more.
    const calls = hook.requests.length
    await touch('merge', ns)
    await waitFor(() => hook.requests.length > calls)
    await sleep(500)
    const after = await fx.client.get(targetCrd.ref, 'merge', { namespace: ns })
    assert.deepEqual(after.metadata.labels, merged.metadata.labels)
    assert.equal(after.metadata.generation, merged.metadata.generation)
  })

  it('leaves the status alone when the answer has status null, and replaces it whole otherwise', async () => {
    const ns = await fx.namespace()
    let mode: 'null' | 'replace' = 'null'
    const hook = await fx.hook(() =>
      mode === 'null'
        ? { labels: { seen: 'null' }, status: null }
        : { labels: { seen: 'replace' }, status: { replaced: true } }
    )
    const created = await fx.client.create(targetCrd.ref, targetObject('status', ns))
    await fx.client.updateStatus(targetCrd.ref, {
      ...created,
      status: { preset: 'kept', nested: { a: 1 } },
    })
    await fx.decoratorController(`status-${ns}`, { ...dcSpec(hook.url, ns), attachments: [] })
    const afterNull = await fx.waitForObject(
      targetCrd.ref,
      'status',
      ns,
      (o) => o.metadata.labels?.['seen'] === 'null'
    )
    assert.deepEqual(afterNull['status'], { preset: 'kept', nested: { a: 1 } })
    mode = 'replace'
    await touch('status', ns)
    const replaced = await fx.waitForObject(
      targetCrd.ref,
      'status',
      ns,
      (o) => o.metadata.labels?.['seen'] === 'replace'
    )
    // A decorator's status replaces the old one whole, with no observedGeneration added.
    assert.deepEqual(replaced['status'], { replaced: true })
  })

  it('writes the status through the main resource of a target without a status subresource', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook(() => ({ labels: { done: 'yes' }, status: { phase: 'decorated' } }))
    await fx.decoratorController(`nostatus-${ns}`, {
      ...dcSpec(hook.url, ns),
      resources: [
        {
          apiVersion: noStatusCrd.apiVersion,
          resource: noStatusCrd.ref.resource,
          labelSelector: { matchLabels: { [TEST_LABEL]: ns } },
        },
      ],
      attachments: [],
    })
    await fx.client.create(noStatusCrd.ref, {
      apiVersion: noStatusCrd.apiVersion,
      kind: 'DbNoStatus',
      metadata: { name: 'plain', namespace: ns, labels: { [TEST_LABEL]: ns } },
    })
    const written = await fx.waitForObject(
      noStatusCrd.ref,
      'plain',
      ns,
      (o) => o.metadata.labels?.['done'] === 'yes'
    )
    assert.deepEqual(written['status'], { phase: 'decorated' })
  })

  it('decorates only targets matching both the label and the annotation selector, and calls finalize for one that stops matching (opt-out)', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const { finalizing } = asRequest(body)
      return finalizing
        ? { labels: { decorated: null }, finalized: true }
        : { labels: { decorated: 'yes' } }
    })
    const dcName = `annsel-${ns}`
    await fx.decoratorController(dcName, {
      ...dcSpec(hook.url, ns),
      resources: [
        {
          apiVersion: targetCrd.apiVersion,
          resource: targetCrd.ref.resource,
          labelSelector: { matchLabels: { [TEST_LABEL]: ns } },
          annotationSelector: {
            matchAnnotations: { 'example.com/decorate': 'yes' },
            matchExpressions: [{ key: 'example.com/skip', operator: 'DoesNotExist' }],
          },
        },
      ],
      attachments: [],
      hooks: { sync: { webhook: { url: hook.url } }, finalize: { webhook: { url: hook.url } } },
    })
    const finalizer = finalizerOf(dcName)
    const chosen = { 'example.com/decorate': 'yes' }
    await fx.client.create(targetCrd.ref, targetObject('chosen', ns, { annotations: chosen }))
    releaseAtTeardown(targetCrd.ref, 'chosen', ns)
    await fx.client.create(targetCrd.ref, targetObject('unannotated', ns))
    await fx.client.create(
      targetCrd.ref,
      targetObject('skipped', ns, { annotations: { ...chosen, 'example.com/skip': '' } })
    )
    // Annotated, but labelled for no controller: the label selector must hold too.
    const unlabelled = targetObject('unlabelled', ns, { annotations: chosen })
    await fx.client.create(targetCrd.ref, {
      ...unlabelled,
      metadata: { ...unlabelled.metadata, labels: { [TEST_LABEL]: `${ns}-other` } },
    })
    await fx.waitForObject(
      targetCrd.ref,
      'chosen',
      ns,
      (o) => o.metadata.labels?.['decorated'] === 'yes' && hasFinalizer(o, finalizer)
    )
    await sleep(1000)
    for (const name of ['unannotated', 'skipped', 'unlabelled']) {
      const o = await fx.client.get(targetCrd.ref, name, { namespace: ns })
      assert.equal(o.metadata.labels?.['decorated'], undefined, name)
      assert.equal(o.metadata.finalizers, undefined, name)
    }
    assert.deepEqual([...new Set(hook.requests.map(nameOf))], ['chosen'])
    // Opting out: the target leaves the selector while it holds our finalizer.
    await fx.client.patch(
      targetCrd.ref,
      'chosen',
      { metadata: { annotations: { 'example.com/decorate': 'no' } } },
      { namespace: ns, type: 'merge' }
    )
    const released = await fx.waitForObject(
      targetCrd.ref,
      'chosen',
      ns,
      (o) => !hasFinalizer(o, finalizer) && o.metadata.labels?.['decorated'] === undefined
    )
    assert.equal(released.metadata.deletionTimestamp, undefined)
    assert.ok(hook.requests.some((r) => asRequest(r).finalizing))
    // Out of scope and without our finalizer: ignored from then on.
    const calls = hook.requests.length
    await touch('chosen', ns)
    await sleep(1500)
    assert.equal(hook.requests.length, calls)
  })

  it('adds its finalizer, calls finalize with finalizing=true on deletion, and lets the target go once finalized', async () => {
    const ns = await fx.namespace()
    let allowFinalize = false
    const hook = await fx.hook((body) => {
      const { object, finalizing } = asRequest(body)
      const name = object.metadata.name ?? ''
      if (finalizing)
        return { labels: { phase: 'finalizing' }, attachments: [], finalized: allowFinalize }
      return { labels: { phase: 'synced' }, attachments: [attachmentObject(name)] }
    })
    const dcName = `fin-${ns}`
    await fx.decoratorController(dcName, {
      ...dcSpec(hook.url, ns),
      hooks: { sync: { webhook: { url: hook.url } }, finalize: { webhook: { url: hook.url } } },
    })
    await fx.client.create(targetCrd.ref, targetObject('fin', ns))
    releaseAtTeardown(targetCrd.ref, 'fin', ns)
    const finalizer = finalizerOf(dcName)
    assert.equal(finalizer, `metacontroller.io/decoratorcontroller-fin-${ns}`)
    await fx.waitForObject(targetCrd.ref, 'fin', ns, (o) => hasFinalizer(o, finalizer))
    await fx.waitForObject(attachmentCrd.ref, 'fin', ns)
    assert.ok(hook.requests.every((r) => !asRequest(r).finalizing))
    await fx.client.delete(targetCrd.ref, 'fin', { namespace: ns })
    // Finalizing: the hook returns no attachments, so the attachment goes; the target stays.
    await fx.waitForGone(attachmentCrd.ref, 'fin', ns)
    const held = await fx.waitForObject(
      targetCrd.ref,
      'fin',
      ns,
      (o) => o.metadata.labels?.['phase'] === 'finalizing'
    )
    assert.ok(held.metadata.deletionTimestamp)
    assert.ok(hasFinalizer(held, finalizer))
    const finalizeRequest = hook.requests.map(asRequest).find((r) => r.finalizing)
    assert.ok(finalizeRequest)
    assert.ok(finalizeRequest.object.metadata.deletionTimestamp)
    allowFinalize = true
    await touch('fin', ns)
    await fx.waitForGone(targetCrd.ref, 'fin', ns)
  })

  it('keeps its finalizer on targets across a restart (spec change), and removes it when the DecoratorController is deleted, so that a deleting target goes (upstream #1062)', async () => {
    const ns = await fx.namespace()
    // Finalize never says finalized: only the release can let a deleting target go.
    const hook = await fx.hook((body) =>
      asRequest(body).finalizing ? { finalized: false } : { labels: { seen: nameOf(body) } }
    )
    const dcName = `release-${ns}`
    await fx.decoratorController(dcName, {
      ...dcSpec(hook.url, ns),
      attachments: [],
      hooks: { sync: { webhook: { url: hook.url } }, finalize: { webhook: { url: hook.url } } },
    })
    const finalizer = finalizerOf(dcName)
    for (const name of ['a', 'b']) {
      await fx.client.create(targetCrd.ref, targetObject(name, ns))
      releaseAtTeardown(targetCrd.ref, name, ns)
    }
    for (const name of ['a', 'b']) {
      await fx.waitForObject(targetCrd.ref, name, ns, (o) => hasFinalizer(o, finalizer))
    }
    // A spec change restarts the controller: what it put on targets stays.
    await fx.client.patch(DCS, dcName, { spec: { resyncPeriodSeconds: 3601 } }, { type: 'merge' })
    await fx.waitForEvent('default', 'Stopped', `Stopped controller: ${dcName}`, dcName)
    const calls = hook.requests.length
    await touch('a', ns)
    await waitFor(() => hook.requests.slice(calls).some((r) => nameOf(r) === 'a'), {
      description: 'a sync of a by the restarted controller',
    })
    await sleep(500)
    for (const name of ['a', 'b']) {
      const o = await fx.client.get(targetCrd.ref, name, { namespace: ns })
      assert.ok(hasFinalizer(o, finalizer), `${name} kept the finalizer across a restart`)
    }
    // b is being deleted, held by a finalize hook that never finishes.
    await fx.client.delete(targetCrd.ref, 'b', { namespace: ns })
    await waitFor(() => hook.requests.some((r) => asRequest(r).finalizing), {
      description: 'finalize called for b',
    })
    const held = await fx.client.get(targetCrd.ref, 'b', { namespace: ns })
    assert.ok(held.metadata.deletionTimestamp)
    // Deleting the DecoratorController releases its targets: b goes, a loses the finalizer.
    await fx.client.delete(DCS, dcName)
    await fx.waitForGone(targetCrd.ref, 'b', ns)
    await fx.waitForObject(targetCrd.ref, 'a', ns, (o) => !hasFinalizer(o, finalizer))
    // And stays released: nothing puts the finalizer back afterwards.
    await sleep(1500)
    const a = await fx.client.get(targetCrd.ref, 'a', { namespace: ns })
    assert.ok(!hasFinalizer(a, finalizer), 'a is still released')
    await fx.client.delete(targetCrd.ref, 'a', { namespace: ns })
    await fx.waitForGone(targetCrd.ref, 'a', ns)
    assert.ok(
      hook.requests.every((r) => !asRequest(r).finalizing || nameOf(r) === 'b'),
      'finalize was called for b only'
    )
  })

  it('runs a finalize-only decorator (no sync hook): finalizer added, no call on normal syncs, finalize on deletion (upstream #948)', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook(() => ({ finalized: true }))
    const dcName = `finonly-${ns}`
    await fx.decoratorController(dcName, {
      ...dcSpec(hook.url, ns),
      attachments: [],
      hooks: { finalize: { webhook: { url: hook.url } } },
    })
    await fx.client.create(targetCrd.ref, targetObject('fo', ns))
    releaseAtTeardown(targetCrd.ref, 'fo', ns)
    const finalizer = finalizerOf(dcName)
    const held = await fx.waitForObject(targetCrd.ref, 'fo', ns, (o) => hasFinalizer(o, finalizer))
    await touch('fo', ns)
    await sleep(1500)
    assert.equal(hook.requests.length, 0, 'no hook call for a target that is not finalizing')
    const still = await fx.client.get(targetCrd.ref, 'fo', { namespace: ns })
    assert.deepEqual(still.metadata.labels, held.metadata.labels)
    assert.deepEqual(still.metadata.finalizers, [finalizer])
    await fx.client.delete(targetCrd.ref, 'fo', { namespace: ns })
    await fx.waitForGone(targetCrd.ref, 'fo', ns)
    const finalizeCalls = hook.requests.map(asRequest)
    assert.ok(finalizeCalls.length > 0, 'finalize was called')
    assert.ok(finalizeCalls.every((r) => r.finalizing))
  })

  it('delivers related objects to a decorator with an annotationSelector and customize, and a related change re-syncs only targets matching both selectors (upstream #1253)', async () => {
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
      const { object, related } = asRequest(body)
      const configMap = related['ConfigMap.v1']?.[RELATED_NAME]
      const value = (configMap?.['data'] as Record<string, string> | undefined)?.['value']
      return {
        attachments:
          value === undefined ? [] : [attachmentObject(object.metadata.name ?? '', { value })],
      }
    })
    await fx.decoratorController(`related-${ns}`, {
      ...dcSpec(sync.url, ns),
      resources: [
        {
          apiVersion: targetCrd.apiVersion,
          resource: targetCrd.ref.resource,
          labelSelector: { matchLabels: { [TEST_LABEL]: ns } },
          annotationSelector: { matchAnnotations: { 'example.com/decorate': 'yes' } },
        },
      ],
      attachments: [
        {
          apiVersion: attachmentCrd.apiVersion,
          resource: attachmentCrd.ref.resource,
          updateStrategy: { method: 'InPlace' },
        },
      ],
      hooks: {
        sync: { webhook: { url: sync.url } },
        customize: { webhook: { url: customize.url } },
      },
    })
    await fx.client.create(
      targetCrd.ref,
      targetObject('match', ns, { annotations: { 'example.com/decorate': 'yes' } })
    )
    await fx.client.create(targetCrd.ref, targetObject('nomatch', ns))
    const first = await fx.waitForObject(attachmentCrd.ref, 'match', ns)
    assert.deepEqual(first['data'], { value: 'one' })
    await fx.client.patch(
      CONFIGMAPS,
      RELATED_NAME,
      { data: { value: 'two' } },
      { namespace: ns, type: 'merge' }
    )
    await fx.waitForObject(
      attachmentCrd.ref,
      'match',
      ns,
      (o) => (o['data'] as Record<string, unknown> | undefined)?.['value'] === 'two'
    )
    await sleep(1000)
    assert.deepEqual([...new Set(sync.requests.map(nameOf))], ['match'])
    assert.deepEqual(
      [
        ...new Set(
          customize.requests.map((r) => (r as { parent: KubeObject }).parent.metadata.name)
        ),
      ],
      ['match']
    )
    await assert.rejects(
      fx.client.get(attachmentCrd.ref, 'nomatch', { namespace: ns }),
      NotFoundError
    )
  })

  it('decorates a cluster-scoped target (ClusterRole) with a namespaced attachment (RoleBinding), and re-creates it after deletion', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const name = nameOf(body)
      return {
        attachments: [
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'RoleBinding',
            metadata: { name, namespace: ns },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
            subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: ns }],
          },
        ],
      }
    })
    const dcName = `clustered-${ns}`
    await fx.decoratorController(dcName, {
      resources: [
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          resource: 'clusterroles',
          labelSelector: { matchLabels: { [TEST_LABEL]: ns } },
        },
      ],
      attachments: [{ apiVersion: 'rbac.authorization.k8s.io/v1', resource: 'rolebindings' }],
      hooks: { sync: { webhook: { url: hook.url } } },
    })
    const roleName = `decorated-${ns}`
    const role = await fx.client.create(CLUSTER_ROLES, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: roleName, labels: { [TEST_LABEL]: ns } },
      rules: [],
    })
    fx.onTeardown(() => fx.client.delete(CLUSTER_ROLES, roleName).catch(() => undefined))
    const binding = await fx.waitForObject(ROLE_BINDINGS, roleName, ns)
    const [owner] = binding.metadata.ownerReferences ?? []
    assert.equal(owner?.kind, 'ClusterRole')
    assert.equal(owner.uid, role.metadata.uid)
    assert.equal(owner.controller, true)
    assert.equal(binding.metadata.annotations?.[DECORATOR_ANNOTATION], dcName)
    // v1 requests of a cluster-scoped target key namespaced attachments by namespace/name.
    await fx.client.delete(ROLE_BINDINGS, roleName, { namespace: ns })
    const recreated = await fx.waitForObject(
      ROLE_BINDINGS,
      roleName,
      ns,
      (o) => o.metadata.uid !== binding.metadata.uid
    )
    assert.equal(recreated.metadata.ownerReferences?.[0]?.uid, role.metadata.uid)
    assert.ok(
      hook.requests.some(
        (r) =>
          asRequest(r).attachments['RoleBinding.rbac.authorization.k8s.io/v1']?.[
            `${ns}/${roleName}`
          ] !== undefined
      ),
      'a request listed the RoleBinding under namespace/name'
    )
  })

  it('decorates a built-in resource without a status subresource (ConfigMap): labels and annotations written with a PUT', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => ({
      labels: { decorated: 'yes' },
      annotations: { 'example.com/by': nameOf(body) },
    }))
    await fx.decoratorController(`builtin-${ns}`, {
      resources: [
        {
          apiVersion: 'v1',
          resource: 'configmaps',
          labelSelector: { matchLabels: { [TEST_LABEL]: ns } },
        },
      ],
      hooks: { sync: { webhook: { url: hook.url } } },
    })
    await fx.client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'plain', namespace: ns, labels: { [TEST_LABEL]: ns } },
      data: { a: '1' },
    })
    const decorated = await fx.waitForObject(
      CONFIGMAPS,
      'plain',
      ns,
      (o) => o.metadata.labels?.['decorated'] === 'yes'
    )
    assert.equal(decorated.metadata.annotations?.['example.com/by'], 'plain')
    assert.deepEqual(decorated['data'], { a: '1' })
    assert.equal(decorated['status'], undefined)
  })

  describe('a failing or malformed hook changes nothing', () => {
    type Mode = 'good' | '500' | 'invalid-json' | 'bad-label' | 'undeclared' | 'other-namespace'
    const cases: { mode: Mode; title: string; message: string }[] = [
      { mode: '500', title: 'answers HTTP 500', message: 'unsupported status code: 500' },
      { mode: 'invalid-json', title: 'answers invalid JSON', message: 'JSON' },
      { mode: 'bad-label', title: 'answers a label that is not a string', message: 'labels' },
      {
        mode: 'undeclared',
        title: 'asks for an attachment of an undeclared type',
        message: 'ConfigMap.v1',
      },
      {
        mode: 'other-namespace',
        title: 'asks for an attachment in another namespace than its namespaced target',
        message: 'must share its namespace',
      },
    ]
    for (const { mode, title, message } of cases) {
      it(`leaves attachments and target labels untouched and records a SyncError on the target when the hook ${title}`, async () => {
        const ns = await fx.namespace()
        let current: Mode = 'good'
        const hook = await fx.hook((body) => {
          const name = nameOf(body)
          const changed = { labels: { version: '2' }, annotations: { version: '2' } }
          switch (current) {
            case 'good':
              return {
                labels: { version: '1' },
                attachments: [attachmentObject(name, { v: '1' })],
              }
            case '500':
              throw new Error('hook crashed')
            case 'invalid-json':
              return '{"labels": {'
            case 'bad-label':
              return { ...changed, labels: { version: 2 } }
            case 'undeclared':
              return {
                ...changed,
                attachments: [
                  attachmentObject(name, { v: '2' }),
                  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } },
                ],
              }
            case 'other-namespace': {
              const attachment = attachmentObject(name, { v: '2' })
              return {
                ...changed,
                attachments: [
                  { ...attachment, metadata: { ...attachment.metadata, namespace: 'default' } },
                ],
              }
            }
          }
        })
        await fx.decoratorController(`safe-${mode}-${ns}`, {
          ...dcSpec(hook.url, ns),
          attachments: [
            {
              apiVersion: attachmentCrd.apiVersion,
              resource: attachmentCrd.ref.resource,
              updateStrategy: { method: 'InPlace' },
            },
          ],
        })
        await fx.client.create(targetCrd.ref, targetObject('safe', ns))
        const original = await fx.waitForObject(attachmentCrd.ref, 'safe', ns)
        const targetBefore = await fx.waitForObject(
          targetCrd.ref,
          'safe',
          ns,
          (o) => o.metadata.labels?.['version'] === '1'
        )
        current = mode
        await touch('safe', ns, mode)
        await fx.waitForEvent(ns, 'SyncError', message, 'safe')
        const still = await fx.client.get(attachmentCrd.ref, 'safe', { namespace: ns })
        assert.equal(still.metadata.uid, original.metadata.uid)
        assert.equal(still.metadata.resourceVersion, original.metadata.resourceVersion)
        const targetAfter = await fx.client.get(targetCrd.ref, 'safe', { namespace: ns })
        assert.deepEqual(targetAfter.metadata.labels, targetBefore.metadata.labels)
        assert.equal(targetAfter.metadata.annotations?.['version'], undefined)
        await assert.rejects(
          fx.client.get(attachmentCrd.ref, 'safe', { namespace: 'default' }),
          NotFoundError
        )
        const event = await fx.waitForEvent(ns, 'SyncError', message, 'safe')
        assert.equal(event['type'], 'Warning')
        assert.equal((event['involvedObject'] as { kind?: string }).kind, 'DbTarget')
        current = 'good'
      })
    }
  })

  it('decorates targets of several resource rules, each with its own selector', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => ({
      labels: { kind: asRequest(body).object.kind },
    }))
    await fx.decoratorController(`multi-${ns}`, {
      resources: [
        {
          apiVersion: targetCrd.apiVersion,
          resource: targetCrd.ref.resource,
          labelSelector: { matchLabels: { [TEST_LABEL]: ns } },
        },
        {
          apiVersion: 'v1',
          resource: 'configmaps',
          labelSelector: { matchLabels: { [TEST_LABEL]: ns, pick: 'me' } },
        },
      ],
      hooks: { sync: { webhook: { url: hook.url } } },
    })
    await fx.client.create(targetCrd.ref, targetObject('multi', ns))
    for (const [name, labels] of [
      ['picked', { [TEST_LABEL]: ns, pick: 'me' }],
      ['unpicked', { [TEST_LABEL]: ns }],
    ] as const) {
      await fx.client.create(CONFIGMAPS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: ns, labels },
      })
    }
    await fx.waitForObject(
      targetCrd.ref,
      'multi',
      ns,
      (o) => o.metadata.labels?.['kind'] === 'DbTarget'
    )
    await fx.waitForObject(
      CONFIGMAPS,
      'picked',
      ns,
      (o) => o.metadata.labels?.['kind'] === 'ConfigMap'
    )
    await sleep(1000)
    const unpicked = await fx.client.get(CONFIGMAPS, 'unpicked', { namespace: ns })
    assert.equal(unpicked.metadata.labels?.['kind'], undefined)
  })

  it('ignores status-only updates of a target with ignoreStatusChanges, but not label changes', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook(() => ({ labels: { synced: 'yes' } }))
    const spec = dcSpec(hook.url, ns)
    const [rule] = spec['resources'] as Record<string, unknown>[]
    await fx.decoratorController(`ignore-${ns}`, {
      ...spec,
      resources: [{ ...rule, ignoreStatusChanges: true }],
      attachments: [],
    })
    await fx.client.create(targetCrd.ref, targetObject('quiet', ns))
    const synced = await fx.waitForObject(
      targetCrd.ref,
      'quiet',
      ns,
      (o) => o.metadata.labels?.['synced'] === 'yes'
    )
    await sleep(500)
    const calls = hook.requests.length
    await fx.client.updateStatus(targetCrd.ref, { ...synced, status: { by: 'someone else' } })
    await sleep(1500)
    assert.equal(hook.requests.length, calls, 'a status-only update did not call the hook')
    await fx.client.patch(
      targetCrd.ref,
      'quiet',
      { metadata: { labels: { touched: 'yes' } } },
      { namespace: ns, type: 'merge' }
    )
    await waitFor(() => hook.requests.length > calls, {
      description: 'a sync after a label change',
    })
  })

  it('runs an in-process TypeScript decorator through the same pipeline, without a DecoratorController object', async () => {
    const ns = await fx.namespace()
    const name = `inproc-${ns}`
    const seen: DecoratorSyncRequest[] = []
    await fx.engine.addDecoratorController({
      name,
      spec: { ...dcSpec('', ns), hooks: { sync: {} } },
      hooks: {
        sync: (request): Promise<DecoratorSyncResponse> => {
          seen.push(request)
          const targetName = request.object.metadata.name ?? ''
          return Promise.resolve({
            labels: { from: 'typescript' },
            annotations: {
              'example.com/attachments': String(
                request.attachments.get(ATTACHMENT_TYPE)?.size ?? 0
              ),
            },
            status: null,
            attachments: [attachmentObject(targetName, { from: 'typescript' })],
            resyncAfterMs: 0,
            finalized: false,
          })
        },
      },
    })
    fx.onTeardown(() => fx.engine.removeDecoratorController(name))
    await fx.client.create(targetCrd.ref, targetObject('inproc', ns))
    const attachment = await fx.waitForObject(attachmentCrd.ref, 'inproc', ns)
    assert.deepEqual(attachment['data'], { from: 'typescript' })
    assert.equal(attachment.metadata.annotations?.[DECORATOR_ANNOTATION], name)
    // The attachment's creation wakes the target, whose next request counts it.
    await fx.waitForObject(
      targetCrd.ref,
      'inproc',
      ns,
      (o) =>
        o.metadata.labels?.['from'] === 'typescript' &&
        o.metadata.annotations?.['example.com/attachments'] === '1'
    )
    assert.ok(seen.every((r) => r.object.metadata.namespace === ns))
    assert.equal(seen[0]?.controller.kind, 'DecoratorController')
  })
})
