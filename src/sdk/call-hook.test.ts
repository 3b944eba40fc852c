import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../core/kube-object.js'
import { callCompositeHook } from './call-hook.js'
import { defineCompositeHook } from './hook-types.js'

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
