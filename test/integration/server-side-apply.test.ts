// Server-side apply (--apply-strategy=server-side-apply) on the real control plane: create, update,
// no writes at steady state or on resync, drift repair of a Service, a ConfigMap, a Secret and a
// custom resource (upstream #1177), resyncPeriodSeconds honoured (#1136), Recreate only on a real
// change, and switching a running controller between the two appliers without a delete or recreate.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import type { UpdateMethod } from '../../src/api/composite-controller-spec.js'
import type { CompositeSyncRequest, CompositeSyncResponse } from '../../src/api/hook-model.js'
import { LAST_APPLIED_ANNOTATION } from '../../src/engine/children/dynamic-apply.js'
import type { ApplyStrategy } from '../../src/engine/children/child-applier.js'
import { Engine } from '../../src/engine/engine.js'
import { managedFieldsOf } from '../../src/engine/children/transfer-ownership.js'
import type { ResourceRef } from '../../src/kube/dynamic-client.js'
import { waitFor } from '../../src/testing/index.js'
import {
  EngineFixture,
  isolatedComposite,
  isolatedDecorator,
  TEST_LABEL,
} from '../support/engine-fixture.js'

const { parentCrd, childCrd, parentObject } = isolatedComposite('SsaParent', 'SsaChild')
const decorated = isolatedDecorator('SsaTarget', 'SsaAttach')

const CONFIG_MAPS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'configmaps',
  namespaced: true,
}
const SERVICES: ResourceRef = { group: '', version: 'v1', resource: 'services', namespaced: true }
const SECRETS: ResourceRef = { group: '', version: 'v1', resource: 'secrets', namespaced: true }

/** What the in-process hook answers; tests change it to change the desired children. */
interface Desired {
  version: string
  /** A ConfigMap key that is dropped later, to prove that applied fields are removed. */
  old: boolean
}

const KINDS = [
  { ref: CONFIG_MAPS, suffix: 'cm' },
  { ref: SERVICES, suffix: 'svc' },
  { ref: SECRETS, suffix: 'secret' },
  { ref: childCrd.ref, suffix: 'crd' },
] as const

function base64(text: string): string {
  return Buffer.from(text).toString('base64')
}

function children(name: string, want: Desired): KubeObject[] {
  const labels = { app: name, tier: 'web' }
  return [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `${name}-cm`, labels },
      data: { version: want.version, ...(want.old ? { old: 'yes' } : {}) },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: `${name}-svc`, labels },
      spec: {
        selector: { app: name, version: want.version },
        ports: [{ name: 'http', port: 80, targetPort: 8080 }],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${name}-secret`, labels },
      type: 'Opaque',
      data: { token: base64(want.version) },
    },
    {
      apiVersion: childCrd.apiVersion,
      kind: 'SsaChild',
      metadata: { name: `${name}-crd`, labels },
      spec: { version: want.version, replicas: 1 },
    },
  ]
}

/** An in-process controller over the four child kinds, all with one update method. */
function controller(
  ns: string,
  want: Desired,
  options: { method?: UpdateMethod; resyncPeriodSeconds?: number; calls?: { n: number } } = {}
) {
  const method = options.method ?? 'InPlace'
  const updateStrategy = { method }
  return {
    name: `ssa-${ns}`,
    spec: {
      parentResource: {
        apiVersion: parentCrd.apiVersion,
        resource: parentCrd.ref.resource,
        labelSelector: { matchLabels: { [TEST_LABEL]: ns } },
      },
      childResources: [
        { apiVersion: 'v1', resource: 'configmaps', updateStrategy },
        { apiVersion: 'v1', resource: 'services', updateStrategy },
        { apiVersion: 'v1', resource: 'secrets', updateStrategy },
        { apiVersion: childCrd.apiVersion, resource: childCrd.ref.resource, updateStrategy },
      ],
      ...(options.resyncPeriodSeconds === undefined
        ? {}
        : { resyncPeriodSeconds: options.resyncPeriodSeconds }),
      hooks: { sync: {} },
    },
    hooks: {
      sync: (request: CompositeSyncRequest): Promise<CompositeSyncResponse> => {
        if (options.calls !== undefined) options.calls.n++
        return Promise.resolve({
          status: { ready: true },
          children: children(request.parent.metadata.name ?? '', want),
          resyncAfterMs: 0,
          finalized: false,
        })
      },
    },
  }
}

/** The parts of a child the hook decides, plus its UID: what must survive a switch. */
function content(o: KubeObject): Record<string, unknown> {
  const spec = o['spec'] as Record<string, unknown> | undefined
  return {
    uid: o.metadata.uid,
    labels: o.metadata.labels,
    ownerReferences: o.metadata.ownerReferences,
    data: o['data'],
    // A Service's spec carries server-assigned fields; compare what the hook sets.
    spec: o.kind === 'Service' ? { selector: spec?.['selector'], ports: spec?.['ports'] } : spec,
  }
}

describe('server-side apply', () => {
  let fx: EngineFixture
  const engines: Engine[] = []

  before(async () => {
    fx = await EngineFixture.start({ watchCompositeControllers: false })
    await fx.crds(parentCrd.crd, childCrd.crd, decorated.targetCrd.crd, decorated.attachmentCrd.crd)
  })

  after(async () => {
    await Promise.all(engines.map((e) => e.stop()))
    await fx.stop()
  })

  async function startEngine(applyStrategy: ApplyStrategy): Promise<Engine> {
    const engine = new Engine(fx.plane.config, {
      applyStrategy,
      watchCompositeControllers: false,
      watchDecoratorControllers: false,
      discoveryIntervalMs: 500,
    })
    engines.push(engine)
    await engine.start()
    return engine
  }

  async function stopEngine(engine: Engine): Promise<void> {
    engines.splice(engines.indexOf(engine), 1)
    await engine.stop()
  }

  function get(ref: ResourceRef, name: string, ns: string): Promise<KubeObject> {
    return fx.client.get(ref, name, { namespace: ns })
  }

  async function all(name: string, ns: string): Promise<KubeObject[]> {
    return Promise.all(KINDS.map((k) => get(k.ref, `${name}-${k.suffix}`, ns)))
  }

  /** Waits until every child exists and `check` holds for each. */
  function waitForAll(
    name: string,
    ns: string,
    check: (o: KubeObject) => boolean
  ): Promise<KubeObject[]> {
    return waitFor(
      async () => {
        try {
          const objects = await all(name, ns)
          return objects.every(check) ? objects : undefined
        } catch {
          return undefined
        }
      },
      { timeoutMs: 30_000, intervalMs: 250, description: `children of ${name}` }
    )
  }

  function versionOf(o: KubeObject): string | undefined {
    if (o.kind === 'ConfigMap') return (o['data'] as { version?: string }).version
    if (o.kind === 'Secret')
      return Buffer.from((o['data'] as { token: string }).token, 'base64').toString()
    const spec = o['spec'] as { selector?: { version?: string }; version?: string }
    return o.kind === 'Service' ? spec.selector?.version : spec.version
  }

  /** Resolves once the engine has made no write for `quietMs`. */
  async function settled(engine: Engine, quietMs = 1500): Promise<number> {
    let last = (await engine.metrics.requestTotals()).writes
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, quietMs))
      const now = (await engine.metrics.requestTotals()).writes
      if (now === last) return now
      last = now
    }
  }

  async function poke(name: string, ns: string): Promise<void> {
    await fx.client.patch(
      parentCrd.ref,
      name,
      { metadata: { annotations: { poke: String(Date.now()) } } },
      { namespace: ns, type: 'merge' }
    )
  }

  it('creates and updates children, removes fields no longer desired, and writes nothing at steady state, on resync or after a restart', async () => {
    const ns = await fx.namespace('ssa')
    const want: Desired = { version: '1', old: true }
    const calls = { n: 0 }
    const definition = controller(ns, want, { resyncPeriodSeconds: 1, calls })
    const engine = await startEngine('server-side-apply')
    await engine.addCompositeController(definition)
    await fx.client.create(parentCrd.ref, parentObject('web', ns))

    const created = await waitForAll('web', ns, (o) => versionOf(o) === '1')
    for (const o of created) {
      assert.equal(o.metadata.annotations?.[LAST_APPLIED_ANNOTATION], undefined, o.kind)
      const managers = managedFieldsOf(o.metadata).map((m) => `${m.manager}/${m.operation}`)
      assert.ok(managers.includes('metacontroller/Apply'), `${o.kind}: ${managers.join(',')}`)
      assert.equal(o.metadata.ownerReferences?.[0]?.controller, true)
    }

    want.version = '2'
    want.old = false
    await poke('web', ns)
    const updated = await waitForAll('web', ns, (o) => versionOf(o) === '2')
    const cm = updated.find((o) => o.kind === 'ConfigMap')
    assert.deepEqual(cm?.['data'], { version: '2' }, 'the key no longer applied is removed')
    assert.deepEqual(
      updated.map((o) => o.metadata.uid),
      created.map((o) => o.metadata.uid),
      'updated in place'
    )

    // Steady state: resyncs every second call the hook and write nothing.
    const writes = await settled(engine)
    const versions = (await all('web', ns)).map((o) => o.metadata.resourceVersion)
    const before = calls.n
    await waitFor(() => calls.n >= before + 3, { timeoutMs: 15_000 })
    await poke('web', ns)
    await waitFor(() => calls.n >= before + 4)
    await new Promise((resolve) => setTimeout(resolve, 500))
    assert.equal((await engine.metrics.requestTotals()).writes - writes, 0, 'writes at resync')
    assert.deepEqual(
      (await all('web', ns)).map((o) => o.metadata.resourceVersion),
      versions,
      'no child rewritten'
    )

    // A restart: a fresh engine reads the children's managed fields but writes nothing.
    await stopEngine(engine)
    const fresh = await startEngine('server-side-apply')
    const restarted = { n: 0 }
    await fresh.addCompositeController(controller(ns, want, { calls: restarted }))
    await waitFor(() => restarted.n > 0)
    await settled(fresh)
    assert.equal((await fresh.metrics.requestTotals()).writes, 0, 'writes after a restart')
    await stopEngine(fresh)
  })

  it('repairs drift of a Service, a ConfigMap, a Secret and a custom resource on the change event, keeping fields it never set (upstream #1177)', async () => {
    const ns = await fx.namespace('ssa')
    const engine = await startEngine('server-side-apply')
    await engine.addCompositeController(controller(ns, { version: '1', old: false }))
    await fx.client.create(parentCrd.ref, parentObject('drift', ns))
    await waitForAll('drift', ns, (o) => versionOf(o) === '1')
    const quiet = await settled(engine)

    // Another client edits every child: values the engine applies, and fields it never set.
    const edit = { namespace: ns, type: 'merge' as const, fieldManager: 'someone-else' }
    await fx.client.patch(CONFIG_MAPS, 'drift-cm', { data: { version: 'x', extra: 'kept' } }, edit)
    await fx.client.patch(SERVICES, 'drift-svc', { spec: { selector: { version: 'x' } } }, edit)
    await fx.client.patch(SECRETS, 'drift-secret', { data: { token: base64('x') } }, edit)
    // Metadata-only drift of an object with a generation: upstream's generation check misses it.
    const crdBefore = await get(childCrd.ref, 'drift-crd', ns)
    await fx.client.patch(childCrd.ref, 'drift-crd', { metadata: { labels: { tier: null } } }, edit)

    const repaired = await waitForAll(
      'drift',
      ns,
      (o) => versionOf(o) === '1' && o.metadata.labels?.['tier'] === 'web'
    )
    const cm = repaired.find((o) => o.kind === 'ConfigMap')
    assert.deepEqual(cm?.['data'], { version: '1', extra: 'kept' })
    const crd = repaired.find((o) => o.kind === 'SsaChild')
    assert.equal(crd?.metadata.generation, crdBefore.metadata.generation)
    // One apply per drifted child, and no fight afterwards.
    assert.equal((await settled(engine)) - quiet, 4, 'writes to repair four children')
    await stopEngine(engine)
  })

  it('honours resyncPeriodSeconds: a new answer of the hook is applied at the next resync, with no event (upstream #1136)', async () => {
    const ns = await fx.namespace('ssa')
    const want: Desired = { version: '1', old: false }
    const engine = await startEngine('server-side-apply')
    await engine.addCompositeController(controller(ns, want, { resyncPeriodSeconds: 1 }))
    await fx.client.create(parentCrd.ref, parentObject('tick', ns))
    await waitForAll('tick', ns, (o) => versionOf(o) === '1')
    // Nothing in the cluster changes; only what the hook answers.
    want.version = '2'
    await waitForAll('tick', ns, (o) => versionOf(o) === '2')
    await stopEngine(engine)
  })

  it('recreates a Recreate child on a real change only, never for fields others set', async () => {
    const ns = await fx.namespace('ssa')
    const want: Desired = { version: '1', old: false }
    const engine = await startEngine('server-side-apply')
    await engine.addCompositeController(controller(ns, want, { method: 'Recreate' }))
    await fx.client.create(parentCrd.ref, parentObject('rec', ns))
    const first = await waitForAll('rec', ns, (o) => versionOf(o) === '1')
    await fx.client.patch(
      CONFIG_MAPS,
      'rec-cm',
      { metadata: { labels: { added: 'by-someone' } } },
      { namespace: ns, type: 'merge', fieldManager: 'someone-else' }
    )
    await poke('rec', ns)
    await settled(engine)
    assert.deepEqual(
      (await all('rec', ns)).map((o) => o.metadata.uid),
      first.map((o) => o.metadata.uid),
      'nothing recreated for a label the engine does not apply'
    )
    want.version = '2'
    await poke('rec', ns)
    const second = await waitForAll('rec', ns, (o) => versionOf(o) === '2')
    for (const [i, o] of second.entries()) {
      assert.notEqual(o.metadata.uid, first[i]?.metadata.uid, `${o.kind} recreated`)
    }
    await stopEngine(engine)
  })

  it("applies a DecoratorController's attachments the same way: create, drift repair, no writes at rest", async () => {
    const ns = await fx.namespace('ssa')
    const engine = await startEngine('server-side-apply')
    const calls = { n: 0 }
    await engine.addDecoratorController({
      name: `ssa-dec-${ns}`,
      spec: {
        ...decorated.dcSpec('', ns),
        attachments: [
          {
            apiVersion: decorated.attachmentCrd.apiVersion,
            resource: decorated.attachmentCrd.ref.resource,
            updateStrategy: { method: 'InPlace' },
          },
        ],
        hooks: { sync: {} },
      },
      hooks: {
        sync: (request) => {
          calls.n++
          const name = request.object.metadata.name ?? ''
          return Promise.resolve({
            labels: {},
            annotations: {},
            status: null,
            attachments: [decorated.attachmentObject(`${name}-att`, { owned: 'by-hook' })],
            resyncAfterMs: 0,
            finalized: false,
          })
        },
      },
    })
    await fx.client.create(decorated.targetCrd.ref, decorated.targetObject('dec', ns))
    const ref = decorated.attachmentCrd.ref
    const created = await fx.waitForObject(ref, 'dec-att', ns)
    assert.ok(managedFieldsOf(created.metadata).some((m) => m.manager === 'metacontroller'))
    await fx.client.patch(
      ref,
      'dec-att',
      { data: { owned: 'edited' } },
      { namespace: ns, type: 'merge', fieldManager: 'someone-else' }
    )
    const repaired = await fx.waitForObject(
      ref,
      'dec-att',
      ns,
      (o) => (o['data'] as { owned?: string }).owned === 'by-hook'
    )
    assert.equal(repaired.metadata.uid, created.metadata.uid)
    const writes = await settled(engine)
    const seen = calls.n
    await fx.client.patch(
      decorated.targetCrd.ref,
      'dec',
      { spec: { poke: 1 } },
      { namespace: ns, type: 'merge' }
    )
    await waitFor(() => calls.n > seen)
    assert.equal((await settled(engine)) - writes, 0)
    await stopEngine(engine)
  })

  for (const method of ['InPlace', 'Recreate'] as const) {
    it(`switches a running ${method} controller from dynamic apply to server-side apply and back without a delete, a recreate or a change`, async () => {
      const ns = await fx.namespace('ssa')
      const want: Desired = { version: '1', old: true }
      const definition = controller(ns, want, { method })

      const dynamic = await startEngine('dynamic-apply')
      await dynamic.addCompositeController(definition)
      await fx.client.create(parentCrd.ref, parentObject('sw', ns))
      const start = await waitForAll(
        'sw',
        ns,
        (o) => o.metadata.annotations?.[LAST_APPLIED_ANNOTATION] !== undefined
      )
      await settled(dynamic)
      await stopEngine(dynamic)

      const ssa = await startEngine('server-side-apply')
      const calls = { n: 0 }
      await ssa.addCompositeController(controller(ns, want, { method, calls }))
      await waitFor(() => calls.n > 0)
      // InPlace: a JSON patch (annotation, ownership) and an apply per child. Recreate: a dry-run
      // apply per child (a PATCH, counted as a write, that persists nothing), no delete.
      assert.equal(await settled(ssa), method === 'InPlace' ? 8 : 4, 'requests to take over')
      const taken = await all('sw', ns)
      assert.deepEqual(taken.map(content), start.map(content), 'same UIDs and content')
      if (method === 'InPlace') {
        for (const o of taken) {
          assert.equal(o.metadata.annotations?.[LAST_APPLIED_ANNOTATION], undefined, o.kind)
          const managers = managedFieldsOf(o.metadata).map((m) => m.manager)
          assert.ok(!managers.includes('metacontroller-ts'), `${o.kind}: ${managers.join(',')}`)
        }
        // Nothing is left co-owned by the old applier: a dropped key goes.
        want.old = false
        await poke('sw', ns)
        await waitFor(async () => {
          const cm = await get(CONFIG_MAPS, 'sw-cm', ns)
          return (cm['data'] as Record<string, string>)['old'] === undefined
        })
      }
      const writes = await settled(ssa)
      await poke('sw', ns)
      await waitFor(() => calls.n > 1)
      assert.equal((await settled(ssa)) - writes, 0, 'no writes once taken over')
      const beforeBack = await all('sw', ns)
      await stopEngine(ssa)

      const back = await startEngine('dynamic-apply')
      const backCalls = { n: 0 }
      await back.addCompositeController(controller(ns, want, { method, calls: backCalls }))
      await waitFor(() => backCalls.n > 0)
      await settled(back)
      const returned = await all('sw', ns)
      assert.deepEqual(returned.map(content), beforeBack.map(content), 'same UIDs and content')
      for (const o of returned) {
        assert.ok(o.metadata.annotations?.[LAST_APPLIED_ANNOTATION], `${o.kind} annotated again`)
      }
      await stopEngine(back)
    })
  }
})
