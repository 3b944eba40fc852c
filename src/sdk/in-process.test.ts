import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { CompositeSyncRequest, DecoratorSyncRequest } from '../api/hook-model.js'
import type { KubeObject } from '../core/kube-object.js'
import { defineCompositeHook, defineCustomizeHook, defineDecoratorHook } from './hook-types.js'
import { inProcessDecoratorHooks, inProcessHooks } from './in-process.js'
import { kubeObject } from './object-helpers.js'

const parent: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'Thing',
  metadata: { name: 'a', namespace: 'ns', uid: 'u1' },
}
const child: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'a', namespace: 'ns' },
}

function request(): CompositeSyncRequest {
  return {
    controller: {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: 'c' },
    },
    parent,
    children: new Map([['ConfigMap.v1', new Map([['ns/a', child]])]]),
    related: new Map(),
    finalizing: false,
  }
}

describe('inProcessHooks', () => {
  it('gives the hook the v2 JSON request and returns the validated internal response', async () => {
    let seen: unknown
    const hooks = inProcessHooks({
      sync: defineCompositeHook((req) => {
        seen = req
        return {
          status: { n: 1 },
          children: [kubeObject('v1', 'ConfigMap', { name: 'a' })],
          resyncAfterSeconds: 2,
        }
      }),
    })
    assert.ok(hooks.sync)
    const out = await hooks.sync(request(), new AbortController().signal)
    assert.deepEqual(out, {
      status: { n: 1 },
      children: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }],
      resyncAfterMs: 2000,
      finalized: false,
    })
    assert.deepEqual((seen as { children: unknown }).children, {
      'ConfigMap.v1': { 'ns/a': child },
    })
    assert.deepEqual((seen as { controller: { status: unknown } }).controller.status, {})
  })

  it('keeps the engine objects safe from a hook that mutates its request', async () => {
    const hooks = inProcessHooks({
      sync: (req) => {
        ;(req.parent.metadata as { name?: string }).name = 'changed'
        return {}
      },
    })
    const input = request()
    await hooks.sync?.(input, new AbortController().signal)
    assert.equal(input.parent.metadata.name, 'a')
  })

  it('rejects what a webhook answer would be rejected for: a child without kind', async () => {
    const hooks = inProcessHooks({
      sync: () => ({
        children: [{ apiVersion: 'v1', metadata: { name: 'x' } } as unknown as KubeObject],
      }),
    })
    await assert.rejects(
      hooks.sync?.(request(), new AbortController().signal) ?? Promise.resolve(),
      /kind/
    )
  })

  it('adapts only the hooks it is given', () => {
    const hooks = inProcessHooks({ finalize: () => ({ finalized: true }) })
    assert.equal(hooks.sync, undefined)
    assert.equal(typeof hooks.finalize, 'function')
  })
})

describe('inProcessDecoratorHooks', () => {
  const target: KubeObject = {
    apiVersion: 'example.com/v1',
    kind: 'Thing',
    metadata: { name: 'a', namespace: 'ns', uid: 'u1' },
  }

  function decoratorRequest(finalizing = false): DecoratorSyncRequest {
    return {
      controller: {
        apiVersion: 'metacontroller.k8s.io/v1alpha1',
        kind: 'DecoratorController',
        metadata: { name: 'd' },
      },
      object: target,
      attachments: new Map([['ConfigMap.v1', new Map([['ns/a', child]])]]),
      related: new Map(),
      finalizing,
    }
  }

  it('gives the hook the v2 JSON request and returns the validated internal response', async () => {
    let seen: unknown
    const hooks = inProcessDecoratorHooks({
      sync: defineDecoratorHook((req) => {
        seen = req
        return {
          labels: { decorated: 'true', stale: null },
          annotations: { note: 'x' },
          attachments: [kubeObject('v1', 'ConfigMap', { name: 'a' })],
          resyncAfterSeconds: 1.5,
        }
      }),
    })
    assert.ok(hooks.sync)
    const out = await hooks.sync(decoratorRequest(), new AbortController().signal)
    assert.deepEqual(out, {
      labels: { decorated: 'true', stale: null },
      annotations: { note: 'x' },
      status: null,
      attachments: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }],
      resyncAfterMs: 1500,
      finalized: false,
    })
    const wire = seen as { object: unknown; attachments: unknown; controller: { status: unknown } }
    assert.deepEqual(wire.object, target)
    assert.deepEqual(wire.attachments, { 'ConfigMap.v1': { 'ns/a': child } })
    assert.deepEqual(wire.controller.status, {})
  })

  it('keeps the engine objects safe from a hook that mutates its request', async () => {
    const hooks = inProcessDecoratorHooks({
      sync: (req) => {
        ;(req.object.metadata as { name?: string }).name = 'changed'
        return {}
      },
    })
    const input = decoratorRequest()
    await hooks.sync?.(input, new AbortController().signal)
    assert.equal(input.object.metadata.name, 'a')
  })

  it('rejects what a v2 webhook answer would be rejected for: an unknown field', async () => {
    const hooks = inProcessDecoratorHooks({
      sync: () => ({ attachements: [] }) as unknown as Record<string, never>,
    })
    await assert.rejects(
      hooks.sync?.(decoratorRequest(), new AbortController().signal) ?? Promise.resolve(),
      /unknown field "attachements"/
    )
  })

  it('names the finalize hook in its errors, and passes finalizing through', async () => {
    let finalizing: boolean | undefined
    const hooks = inProcessDecoratorHooks({
      finalize: (req) => {
        finalizing = req.finalizing
        return { finalized: 'yes' } as unknown as Record<string, never>
      },
    })
    await assert.rejects(
      hooks.finalize?.(decoratorRequest(true), new AbortController().signal) ?? Promise.resolve(),
      /type: finalize\)/
    )
    assert.equal(finalizing, true)
  })

  it('adapts only the hooks it is given, customize included', async () => {
    const hooks = inProcessDecoratorHooks({
      customize: defineCustomizeHook(({ parent }) => ({
        relatedResources: [
          { apiVersion: 'v1', resource: 'configmaps', names: [parent.metadata.name ?? ''] },
        ],
      })),
    })
    assert.equal(hooks.sync, undefined)
    assert.equal(hooks.finalize, undefined)
    const out = await hooks.customize?.(
      { controller: decoratorRequest().controller, parent: target },
      new AbortController().signal
    )
    assert.deepEqual(out, {
      relatedResources: [{ apiVersion: 'v1', resource: 'configmaps', names: ['a'] }],
    })
  })
})
