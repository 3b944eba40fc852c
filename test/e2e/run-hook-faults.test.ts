// `metactl run` against misbehaving hooks and out-of-order installs: a 429 without Retry-After
// backs off, an oversized answer is refused with a Warning and leaves the children alone, and a
// CompositeController applied before its parent CRD starts within seconds of the CRD.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import type { ResourceRef } from '../../src/kube/dynamic-client.js'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import {
  CCS,
  EVENTS,
  isolatedComposite,
  METACONTROLLER_CRDS,
  NAMESPACES,
  serveHook,
  testCrd,
} from '../support/engine-fixture.js'
import type { ServedHook } from '../support/engine-fixture.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'

const CRDS: ResourceRef = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
  namespaced: false,
}
const world = isolatedComposite('FaultParent', 'FaultChild')
const { parentCrd, childCrd } = world
const lateCrd = testCrd(`Late${Date.now().toString(36)}`)

describe('metactl run with faulty hooks', () => {
  let plane: ControlPlane
  let engine: SpawnedEngine
  const hooks: ServedHook[] = []
  const ns = `faults-${Date.now().toString(36)}`
  let mode: 'ok' | 'huge' = 'ok'

  const children = (name: string): KubeObject[] => [
    {
      apiVersion: childCrd.apiVersion,
      kind: 'FaultChild',
      metadata: { name, labels: { app: name } },
    },
  ]

  before(async () => {
    plane = await startControlPlane({ crds: [...METACONTROLLER_CRDS, parentCrd.crd, childCrd.crd] })
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    })
    engine = spawnEngine(plane.kubeconfigPath, ['--hook-response-size-limit', '1Mi'])
    await engine.line('serving controllers', 60_000)
  })

  after(async () => {
    engine.process.kill('SIGTERM')
    await engine.exited
    for (const name of [`${ns}-429`, `${ns}-huge`, `${ns}-late`])
      await plane.client.delete(CCS, name).catch(() => undefined)
    await plane.client.delete(CRDS, lateCrd.crd.metadata.name ?? '').catch(() => undefined)
    await plane.client.delete(NAMESPACES, ns).catch(() => undefined)
    await Promise.all(hooks.map((h) => h.close()))
    await plane.stop()
  })

  it('backs off exponentially on a 429 without Retry-After', async () => {
    const hook = await serveHook(() => ({}), { status: () => 429 })
    hooks.push(hook)
    const parentLabel = `${ns}-429`
    await plane.client.create(CCS, {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: parentLabel },
      spec: world.ccSpec(hook.url, parentLabel),
    })
    for (const name of ['p1', 'p2', 'p3']) {
      const parent = world.parentObject(name, ns)
      await plane.client.create(parentCrd.ref, {
        ...parent,
        metadata: { ...parent.metadata, labels: { 'metactl-test': parentLabel } },
      })
    }
    await waitFor(() => hook.requests.length >= 3, {
      timeoutMs: 30_000,
      description: 'first calls',
    })
    const first = hook.requests.length
    await new Promise((resolve) => setTimeout(resolve, 10_000))
    const calls = hook.requests.length - first
    // Backoff from 5 ms doubling gives at most ~12 retries per parent in 10 s; a hot loop gave
    // thousands per second.
    assert.ok(calls <= 3 * 14, `${calls} hook calls in 10 s for 3 parents`)
    assert.ok(calls >= 3, `${calls} hook calls: the parents are still retried`)
  })

  it('refuses an oversized hook answer with a Warning event and leaves the children alone', async () => {
    const hook = await serveHook((body) => {
      const { parent } = body as { parent: KubeObject }
      const name = parent.metadata.name ?? ''
      if (mode === 'huge')
        return { children: children(name), status: { pad: 'x'.repeat(2 * 1024 * 1024) } }
      return { children: children(name), status: { ok: true } }
    })
    hooks.push(hook)
    const label = `${ns}-huge`
    await plane.client.create(CCS, {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: label },
      spec: world.ccSpec(hook.url, label),
    })
    const parent = world.parentObject('big', ns)
    await plane.client.create(parentCrd.ref, {
      ...parent,
      metadata: { ...parent.metadata, labels: { 'metactl-test': label } },
    })
    const before = await waitFor(
      () => plane.client.get(childCrd.ref, 'big', { namespace: ns }).catch(() => undefined),
      { timeoutMs: 30_000, description: 'the child' }
    )
    mode = 'huge'
    const current = await plane.client.get(parentCrd.ref, 'big', { namespace: ns })
    await plane.client.update(parentCrd.ref, {
      ...current,
      metadata: { ...current.metadata, annotations: { poke: '1' } },
    })
    const event = await waitFor(
      async () =>
        (await plane.client.list(EVENTS, { namespace: ns })).items.find(
          (e) =>
            e['type'] === 'Warning' &&
            (e['involvedObject'] as { name?: string }).name === 'big' &&
            String(e['message']).includes('response too large: more than 1048576 bytes')
        ),
      { timeoutMs: 30_000, intervalMs: 250, description: 'the Warning event' }
    )
    assert.ok(event)
    const afterwards = await plane.client.get(childCrd.ref, 'big', { namespace: ns })
    assert.equal(afterwards.metadata.resourceVersion, before.metadata.resourceVersion)
  })

  it('starts a CompositeController applied before its CRD within seconds of the CRD', async () => {
    const hook = await serveHook(() => ({ children: [], status: {} }))
    hooks.push(hook)
    const name = `${ns}-late`
    await plane.client.create(CCS, {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name },
      spec: {
        parentResource: { apiVersion: lateCrd.apiVersion, resource: lateCrd.ref.resource },
        hooks: { sync: { webhook: { url: hook.url } } },
      },
    })
    // Let it fail a few times, so that its backoff has grown.
    await new Promise((resolve) => setTimeout(resolve, 8000))
    assert.ok(
      !engine.lines.some((l) => l['msg'] === 'started controller' && l['controller'] === name)
    )
    await plane.client.create(CRDS, lateCrd.crd)
    const created = Date.now()
    await waitFor(
      () => engine.lines.some((l) => l['msg'] === 'started controller' && l['controller'] === name),
      { timeoutMs: 20_000, intervalMs: 100, description: 'the late controller to start' }
    )
    const tookMs = Date.now() - created
    assert.ok(tookMs < 10_000, `started ${tookMs} ms after its CRD`)
  })
})
