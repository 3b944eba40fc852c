// CompositeController behaviour beyond upstream's suite: finalize, update strategies, drift
// repair, in-process hooks, hooks in other languages, and safety: a failing or malformed hook
// changes and deletes nothing.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import type { CompositeSyncRequest, CompositeSyncResponse } from '../../src/api/hook-model.js'
import { Engine } from '../../src/engine/engine.js'
import { waitFor } from '../../src/testing/index.js'
import { EngineFixture, isolatedComposite, TEST_LABEL } from '../support/engine-fixture.js'

const { parentCrd, childCrd, parentObject, ccSpec } = isolatedComposite('BehParent', 'BehChild')
const CHILD_TYPE = `BehChild.${childCrd.apiVersion}`

interface SyncRequest {
  parent: KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> }
  children: Record<string, Record<string, KubeObject>>
  finalizing: boolean
}

function child(
  name: string,
  data: Record<string, unknown> = {},
  labels: Record<string, string> = { app: name }
): KubeObject {
  return { apiVersion: childCrd.apiVersion, kind: 'BehChild', metadata: { name, labels }, data }
}

async function startHookProcess(
  command: string,
  args: string[]
): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(command, [...args, '0'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const lines = createInterface({ input: proc.stdout })
  for await (const line of lines) {
    const match = /^listening (\d+)$/.exec(line)
    if (match !== null) return { url: `http://127.0.0.1:${match[1] ?? ''}/sync`, proc }
  }
  throw new Error(`${command} ${args.join(' ')} exited before listening`)
}

describe('composite controller behaviour', () => {
  let fx: EngineFixture

  before(async () => {
    fx = await EngineFixture.start()
    await fx.crds(parentCrd.crd, childCrd.crd)
  })

  after(async () => {
    await fx.stop()
  })

  it('runs the finalize hook on deletion and removes the finalizer once it says finalized', async () => {
    const ns = await fx.namespace()
    let allowFinalize = false
    const hook = await fx.hook((body) => {
      const { parent, finalizing } = body as SyncRequest
      const name = parent.metadata.name ?? ''
      if (finalizing)
        return { children: [], finalized: allowFinalize, status: { phase: 'finalizing' } }
      return { children: [child(name)], status: { phase: 'synced' } }
    })
    await fx.compositeController(`fin-${ns}`, {
      ...ccSpec(hook.url, ns),
      hooks: { sync: { webhook: { url: hook.url } }, finalize: { webhook: { url: hook.url } } },
    })
    await fx.client.create(parentCrd.ref, parentObject('fin', ns))
    const finalizer = `metacontroller.io/compositecontroller-fin-${ns}`
    await fx.waitForObject(
      parentCrd.ref,
      'fin',
      ns,
      (o) => o.metadata.finalizers?.includes(finalizer) === true
    )
    await fx.waitForObject(childCrd.ref, 'fin', ns)
    await fx.client.delete(parentCrd.ref, 'fin', { namespace: ns })
    // Finalizing: the hook returns no children, so the child is deleted, but the parent stays.
    await fx.waitForGone(childCrd.ref, 'fin', ns)
    const held = await fx.waitForObject(
      parentCrd.ref,
      'fin',
      ns,
      (o) => (o['status'] as { phase?: string } | undefined)?.phase === 'finalizing'
    )
    assert.ok(held.metadata.deletionTimestamp)
    allowFinalize = true
    await fx.client.patch(
      parentCrd.ref,
      'fin',
      { metadata: { annotations: { poke: '1' } } },
      { namespace: ns, type: 'merge' }
    )
    await fx.waitForGone(parentCrd.ref, 'fin', ns)
    assert.ok(hook.requests.some((r) => (r as SyncRequest).finalizing))
  })

  it('recreates a Recreate child (new UID) and updates an InPlace child (same UID)', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const { parent } = body as SyncRequest
      const version = typeof parent.spec?.['version'] === 'string' ? parent.spec['version'] : '1'
      return {
        children: [
          child('recreated', { version }, { app: 'up' }),
          child('inplace', { version }, { app: 'up' }),
        ],
      }
    })
    // Two child rules of one type cannot carry two strategies, so run two controllers.
    await fx.compositeController(`recreate-${ns}`, {
      ...ccSpec(hook.url, ns),
      childResources: [
        {
          apiVersion: childCrd.apiVersion,
          resource: 'behchilds',
          updateStrategy: { method: 'Recreate' },
        },
      ],
    })
    await fx.client.create(parentCrd.ref, parentObject('up', ns, { version: '1' }))
    const before = await fx.waitForObject(childCrd.ref, 'recreated', ns)
    const inplaceBefore = await fx.waitForObject(childCrd.ref, 'inplace', ns)
    await fx.client.patch(
      parentCrd.ref,
      'up',
      { spec: { version: '2' } },
      { namespace: ns, type: 'merge' }
    )
    const after = await fx.waitForObject(
      childCrd.ref,
      'recreated',
      ns,
      (o) => (o['data'] as { version?: string }).version === '2'
    )
    assert.notEqual(after.metadata.uid, before.metadata.uid, 'Recreate replaced the object')
    const inplaceAfter = await fx.waitForObject(
      childCrd.ref,
      'inplace',
      ns,
      (o) => (o['data'] as { version?: string }).version === '2'
    )
    assert.notEqual(
      inplaceAfter.metadata.uid,
      inplaceBefore.metadata.uid,
      'same controller: Recreate for both'
    )

    const ns2 = await fx.namespace()
    await fx.compositeController(`inplace-${ns2}`, {
      ...ccSpec(hook.url, ns2),
      childResources: [
        {
          apiVersion: childCrd.apiVersion,
          resource: 'behchilds',
          updateStrategy: { method: 'InPlace' },
        },
      ],
    })
    await fx.client.create(parentCrd.ref, parentObject('up', ns2, { version: '1' }))
    const first = await fx.waitForObject(childCrd.ref, 'inplace', ns2)
    await fx.client.patch(
      parentCrd.ref,
      'up',
      { spec: { version: '2' } },
      { namespace: ns2, type: 'merge' }
    )
    const second = await fx.waitForObject(
      childCrd.ref,
      'inplace',
      ns2,
      (o) => (o['data'] as { version?: string }).version === '2'
    )
    assert.equal(second.metadata.uid, first.metadata.uid, 'InPlace kept the object')
  })

  it('puts back an InPlace child someone else edited, and keeps fields it never set', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const name = (body as SyncRequest).parent.metadata.name ?? ''
      return { children: [child(name, { owned: 'by-hook' })] }
    })
    await fx.compositeController(`drift-${ns}`, {
      ...ccSpec(hook.url, ns),
      childResources: [
        {
          apiVersion: childCrd.apiVersion,
          resource: 'behchilds',
          updateStrategy: { method: 'InPlace' },
        },
      ],
    })
    await fx.client.create(parentCrd.ref, parentObject('drift', ns))
    await fx.waitForObject(childCrd.ref, 'drift', ns)
    await fx.client.patch(
      childCrd.ref,
      'drift',
      { data: { owned: 'edited', extra: 'kept' } },
      { namespace: ns, type: 'merge' }
    )
    const repaired = await fx.waitForObject(
      childCrd.ref,
      'drift',
      ns,
      (o) => (o['data'] as { owned?: string }).owned === 'by-hook'
    )
    assert.equal((repaired['data'] as { extra?: string }).extra, 'kept')
  })

  it('makes no write when nothing changed (a resync of a converged parent)', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const name = (body as SyncRequest).parent.metadata.name ?? ''
      return { children: [child(name, { a: '1' })], status: { ok: true } }
    })
    await fx.compositeController(`idle-${ns}`, {
      ...ccSpec(hook.url, ns),
      childResources: [
        {
          apiVersion: childCrd.apiVersion,
          resource: 'behchilds',
          updateStrategy: { method: 'InPlace' },
        },
      ],
    })
    await fx.client.create(parentCrd.ref, parentObject('idle', ns))
    const settled = await fx.waitForObject(
      parentCrd.ref,
      'idle',
      ns,
      (o) => (o['status'] as { ok?: boolean } | undefined)?.ok === true
    )
    const childBefore = await fx.waitForObject(childCrd.ref, 'idle', ns)
    const calls = hook.requests.length
    await fx.client.patch(
      parentCrd.ref,
      'idle',
      { metadata: { annotations: { resync: 'now' } } },
      { namespace: ns, type: 'merge' }
    )
    await waitFor(() => hook.requests.length > calls)
    await new Promise((resolve) => setTimeout(resolve, 500))
    const childAfter = await fx.client.get(childCrd.ref, 'idle', { namespace: ns })
    const parentAfter = await fx.client.get(parentCrd.ref, 'idle', { namespace: ns })
    assert.equal(childAfter.metadata.resourceVersion, childBefore.metadata.resourceVersion)
    assert.deepEqual(parentAfter['status'], settled['status'])
  })

  describe('a failing or malformed hook changes and deletes nothing', () => {
    type Mode =
      'good' | '500' | 'timeout' | 'invalid-json' | 'undeclared' | 'other-namespace' | 'bad-labels'
    const cases: { mode: Mode; message: string }[] = [
      { mode: '500', message: 'unsupported status code: 500' },
      { mode: 'timeout', message: 'timed out' },
      { mode: 'invalid-json', message: 'JSON' },
      { mode: 'undeclared', message: 'not in childResources' },
      { mode: 'other-namespace', message: 'must share its namespace' },
      { mode: 'bad-labels', message: "don't match parent selector" },
    ]
    for (const { mode, message } of cases) {
      it(`keeps children intact and reports SyncError when the hook ${mode === 'timeout' ? 'times out' : `answers ${mode}`}`, async () => {
        const ns = await fx.namespace()
        let current: Mode = 'good'
        const hook = await fx.hook((body) => {
          const name = (body as SyncRequest).parent.metadata.name ?? ''
          switch (current) {
            case 'good':
              return { children: [child(name, { v: '1' })], status: { good: true } }
            case 'timeout':
              return new Promise(() => undefined)
            case 'invalid-json':
              return '{"children": [ {'
            case 'undeclared':
              return {
                children: [
                  child(name, { v: '2' }),
                  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } },
                ],
              }
            case 'other-namespace':
              return {
                children: [
                  {
                    ...child(name, { v: '2' }),
                    metadata: { name, namespace: 'default', labels: { app: name } },
                  },
                ],
              }
            case 'bad-labels':
              return { children: [child(name, { v: '2' }, { app: 'someone-else' })] }
            case '500':
              throw new Error('hook crashed')
          }
        })
        await fx.compositeController(`safe-${mode}-${ns}`, {
          ...ccSpec(hook.url, ns),
          hooks: { sync: { webhook: { url: hook.url, timeout: '1s' } } },
          childResources: [
            {
              apiVersion: childCrd.apiVersion,
              resource: 'behchilds',
              updateStrategy: { method: 'InPlace' },
            },
          ],
        })
        await fx.client.create(parentCrd.ref, parentObject('safe', ns))
        const original = await fx.waitForObject(childCrd.ref, 'safe', ns)
        const parentBefore = await fx.waitForObject(
          parentCrd.ref,
          'safe',
          ns,
          (o) => o['status'] !== undefined
        )
        current = mode
        await fx.client.patch(
          parentCrd.ref,
          'safe',
          { spec: { bump: 1 } },
          { namespace: ns, type: 'merge' }
        )
        await fx.waitForEvent(ns, 'SyncError', message)
        const still = await fx.client.get(childCrd.ref, 'safe', { namespace: ns })
        assert.equal(still.metadata.uid, original.metadata.uid)
        assert.equal(still.metadata.resourceVersion, original.metadata.resourceVersion)
        const parentAfter = await fx.client.get(parentCrd.ref, 'safe', { namespace: ns })
        assert.deepEqual(parentAfter['status'], parentBefore['status'])
        current = 'good'
      })
    }
  })

  it('runs an in-process TypeScript hook through the same pipeline, without a CompositeController object', async () => {
    const ns = await fx.namespace()
    const seen: CompositeSyncRequest[] = []
    await fx.engine.addCompositeController({
      name: `inproc-${ns}`,
      spec: {
        parentResource: {
          apiVersion: parentCrd.apiVersion,
          resource: 'behparents',
          labelSelector: { matchLabels: { [TEST_LABEL]: ns } },
        },
        childResources: [{ apiVersion: childCrd.apiVersion, resource: 'behchilds' }],
        hooks: { sync: {} },
      },
      hooks: {
        sync: (request): Promise<CompositeSyncResponse> => {
          if (request.parent.metadata.namespace !== ns)
            return Promise.resolve({
              status: null,
              children: [],
              resyncAfterMs: 0,
              finalized: false,
            })
          seen.push(request)
          const name = request.parent.metadata.name ?? ''
          return Promise.resolve({
            status: { observed: request.children.get(CHILD_TYPE)?.size ?? 0 },
            children: [child(name, { from: 'typescript' })],
            resyncAfterMs: 0,
            finalized: false,
          })
        },
      },
    })
    fx.onTeardown(() => fx.engine.removeCompositeController(`inproc-${ns}`))
    await fx.client.create(parentCrd.ref, parentObject('inproc', ns))
    const created = await fx.waitForObject(childCrd.ref, 'inproc', ns)
    assert.equal((created['data'] as { from?: string }).from, 'typescript')
    await fx.waitForObject(
      parentCrd.ref,
      'inproc',
      ns,
      (o) => (o['status'] as { observed?: number } | undefined)?.observed === 1
    )
    assert.ok(seen.length >= 1)
  })

  it('ignores status-only parent updates with ignoreStatusChanges, but not label changes', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const name = (body as SyncRequest).parent.metadata.name ?? ''
      return { children: [child(name)], status: { synced: true } }
    })
    const spec = ccSpec(hook.url, ns)
    await fx.compositeController(`ignore-${ns}`, {
      ...spec,
      parentResource: { ...(spec['parentResource'] as object), ignoreStatusChanges: true },
    })
    await fx.client.create(parentCrd.ref, parentObject('quiet', ns))
    const synced = await fx.waitForObject(parentCrd.ref, 'quiet', ns, (o) =>
      Boolean((o['status'] as { synced?: boolean } | undefined)?.synced)
    )
    await new Promise((resolve) => setTimeout(resolve, 500))
    const calls = hook.requests.length
    await fx.client.updateStatus(parentCrd.ref, {
      ...(await fx.client.get(parentCrd.ref, 'quiet', { namespace: ns })),
      status: { ...(synced['status'] as object), extra: 'by someone else' },
    })
    await new Promise((resolve) => setTimeout(resolve, 1500))
    assert.equal(hook.requests.length, calls, 'a status-only update did not call the hook')
    await fx.client.patch(
      parentCrd.ref,
      'quiet',
      { metadata: { labels: { touched: 'yes' } } },
      {
        namespace: ns,
        type: 'merge',
      }
    )
    await waitFor(() => hook.requests.length > calls, {
      description: 'a sync after a label change',
    })
  })

  it("refuses a parent without spec.selector (no generateSelector) with upstream's message", async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook(() => ({ children: [] }))
    await fx.compositeController(`noselector-${ns}`, ccSpec(hook.url, ns))
    await fx.client.create(parentCrd.ref, {
      ...parentObject('bare', ns),
      spec: {},
    })
    await fx.waitForEvent(
      ns,
      'SyncError',
      '.spec.selector must have either matchLabels, matchExpressions, or both',
      'bare'
    )
    assert.equal(hook.requests.length, 0)
  })

  it('writes nothing when a fresh engine resyncs converged parents (a restart)', async () => {
    const ns = await fx.namespace()
    const definition = {
      name: `restart-${ns}`,
      spec: {
        generateSelector: true,
        parentResource: {
          apiVersion: parentCrd.apiVersion,
          resource: 'behparents',
          labelSelector: { matchLabels: { [TEST_LABEL]: ns } },
        },
        childResources: [
          { apiVersion: 'v1', resource: 'configmaps', updateStrategy: { method: 'InPlace' } },
        ],
        hooks: { sync: {} },
      },
      hooks: {
        sync: (request: CompositeSyncRequest): Promise<CompositeSyncResponse> =>
          Promise.resolve({
            status: { ready: true },
            children: [
              {
                apiVersion: 'v1',
                kind: 'ConfigMap',
                metadata: { name: `${request.parent.metadata.name ?? ''}-cm` },
                data: { a: '1' },
              },
            ],
            resyncAfterMs: 0,
            finalized: false,
          }),
      },
    }
    const first = new Engine(fx.plane.config, { watchCompositeControllers: false })
    await first.start()
    await first.addCompositeController(definition)
    await fx.client.create(parentCrd.ref, parentObject('restart', ns))
    await fx.waitForObject(
      parentCrd.ref,
      'restart',
      ns,
      (o) => (o['status'] as { ready?: boolean } | undefined)?.ready === true
    )
    await first.stop()
    const second = new Engine(fx.plane.config, { watchCompositeControllers: false })
    await second.start()
    let synced = false
    await second.addCompositeController({
      ...definition,
      hooks: {
        sync: (request) => {
          synced = true
          return definition.hooks.sync(request)
        },
      },
    })
    await waitFor(() => synced)
    await new Promise((resolve) => setTimeout(resolve, 500))
    const { writes } = await second.metrics.requestTotals()
    await second.stop()
    assert.equal(writes, 0)
  })

  for (const [language, command, script] of [
    ['Python (standard library)', 'python3', 'test/fixtures/hook-servers/sync.py'],
    ['plain Node.js', process.execPath, 'test/fixtures/hook-servers/sync.mjs'],
  ] as const) {
    it(`serves a hook written in ${language}`, async () => {
      const ns = await fx.namespace()
      const { url, proc } = await startHookProcess(command, [script])
      fx.onTeardown(async () => {
        proc.kill('SIGTERM')
        await new Promise((resolve) => proc.once('exit', resolve))
      })
      await fx.compositeController(`lang-${ns}`, ccSpec(url, ns))
      await fx.client.create(parentCrd.ref, parentObject('lang', ns))
      const made = await fx.waitForObject(childCrd.ref, 'lang', ns)
      assert.equal(made.metadata.labels?.['hook'], command === 'python3' ? 'python' : 'node')
      const parent = await fx.waitForObject(
        parentCrd.ref,
        'lang',
        ns,
        (o) => (o['status'] as { children?: number } | undefined)?.children === 1
      )
      assert.equal((parent['status'] as { observedGeneration?: number }).observedGeneration, 1)
    })
  }
})
