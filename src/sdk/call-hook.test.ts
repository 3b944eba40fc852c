import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../core/kube-object.js'
import { callCompositeHook, callDecoratorHook } from './call-hook.js'
import { defineCompositeHook, defineDecoratorHook } from './hook-types.js'

const parent: KubeObject = { apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 'a' } }

describe('callCompositeHook', () => {
  it('returns the checked answer with empty defaults for what the hook left out', async () => {
    const out = await callCompositeHook(
      defineCompositeHook(() => ({ status: { ok: true } })),
      { parent }
    )
    assert.deepEqual(out, {
      status: { ok: true },
      children: [],
      resyncAfterSeconds: 0,
      finalized: false,
    })
  })

  it('fails like the engine on an unknown field (strict decoding)', async () => {
    const hook = (): Record<string, unknown> => ({ chidlren: [] })
    await assert.rejects(
      callCompositeHook(hook as unknown as Parameters<typeof callCompositeHook>[0], { parent }),
      /unknown field "chidlren"/
    )
  })

  it('passes the fixture, including finalizing, to the hook', async () => {
    let finalizing: boolean | undefined
    await callCompositeHook(
      (req) => {
        finalizing = req.finalizing
        return { finalized: true }
      },
      { parent, finalizing: true }
    )
    assert.equal(finalizing, true)
  })
})

describe('callDecoratorHook', () => {
  const object: KubeObject = {
    apiVersion: 'example.com/v1',
    kind: 'Thing',
    metadata: { name: 'a', namespace: 'ns' },
  }

  it('returns the checked answer with empty defaults for what the hook left out', async () => {
    const out = await callDecoratorHook(
      defineDecoratorHook(() => ({ labels: { decorated: 'true', old: null } })),
      { object }
    )
    assert.deepEqual(out, {
      labels: { decorated: 'true', old: null },
      annotations: {},
      status: null,
      attachments: [],
      resyncAfterSeconds: 0,
      finalized: false,
    })
  })

  it('gives the hook the target as object, and the attachments, related and finalizing given', async () => {
    let seen: unknown
    const attachments = { 'ConfigMap.v1': { 'ns/a': object } }
    await callDecoratorHook(
      (req) => {
        seen = req
        return { finalized: true }
      },
      { object, attachments, finalizing: true }
    )
    assert.deepEqual(seen, {
      controller: {
        apiVersion: 'metacontroller.k8s.io/v1alpha1',
        kind: 'DecoratorController',
        metadata: { name: 'test' },
        spec: {},
        status: {},
      },
      object,
      attachments,
      related: {},
      finalizing: true,
    })
  })

  it('fails like the engine on a label value that is neither a string nor null', async () => {
    const hook = (): Record<string, unknown> => ({ labels: { port: 80 } })
    await assert.rejects(
      callDecoratorHook(hook as unknown as Parameters<typeof callDecoratorHook>[0], { object }),
      /labels/
    )
  })

  it('fails like the engine on a composite field in a decorator answer (strict decoding)', async () => {
    const hook = (): Record<string, unknown> => ({ children: [] })
    await assert.rejects(
      callDecoratorHook(hook as unknown as Parameters<typeof callDecoratorHook>[0], { object }),
      /unknown field "children"/
    )
  })
})
