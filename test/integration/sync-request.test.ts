// `metactl sync`'s protocol against real replicas: the sync-request annotation makes the replica
// that serves the parent (the only one, the leader, or the shard owner) sync it at once and
// answer in the sync-result annotation, and the answer itself causes no further sync.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import { SYNC_REQUEST_ANNOTATION, syncResultOf } from '../../src/core/sync-request.js'
import type { SyncResult } from '../../src/core/sync-request.js'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import {
  CCS,
  DCS,
  METACONTROLLER_CRDS,
  NAMESPACES,
  isolatedComposite,
  isolatedDecorator,
  serveHook,
} from '../support/engine-fixture.js'
import type { ServedHook } from '../support/engine-fixture.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'

const world = isolatedComposite('SrParent', 'SrChild')
const { parentCrd, childCrd } = world
const decorated = isolatedDecorator('SrTarget', 'SrAttachment')

describe('sync requests', () => {
  let plane: ControlPlane
  let hook: ServedHook
  const ns = `sr-${Date.now().toString(36)}`
  const calls = new Map<string, number>()
  let engines: SpawnedEngine[] = []

  const stopEngines = async (): Promise<void> => {
    for (const engine of engines) engine.kill()
    await Promise.all(engines.map((e) => e.exited))
    engines = []
  }
  const start = (args: readonly string[]): SpawnedEngine => {
    const engine = spawnEngine(plane.kubeconfigPath, ['--discovery-interval', '2s', ...args])
    engines.push(engine)
    return engine
  }
  const createParent = async (name: string): Promise<void> => {
    await plane.client.create(parentCrd.ref, world.parentObject(name, ns))
  }
  const childOf = (name: string): Promise<KubeObject> =>
    waitFor(() => plane.client.get(childCrd.ref, name, { namespace: ns }).catch(() => undefined), {
      timeoutMs: 60_000,
      description: `the child of ${name}`,
    })
  const requestSync = async (name: string, nonce: string): Promise<void> => {
    await plane.client.patch(
      parentCrd.ref,
      name,
      { metadata: { annotations: { [SYNC_REQUEST_ANNOTATION]: nonce } } },
      { namespace: ns, type: 'merge' }
    )
  }
  const answer = (name: string, nonce: string): Promise<SyncResult> =>
    waitFor(
      async () => {
        const parent = await plane.client.get(parentCrd.ref, name, { namespace: ns })
        const result = syncResultOf(parent)
        return result?.nonce === nonce ? result : undefined
      },
      { timeoutMs: 30_000, intervalMs: 100, description: `the answer to ${nonce} on ${name}` }
    )

  /** The hook calls of a parent once they stopped changing for a second. */
  const settledCalls = async (name: string): Promise<number> => {
    let last = -1
    return waitFor(
      () => {
        const now = calls.get(name) ?? 0
        const settled = now === last
        last = now
        return settled ? now : undefined
      },
      { timeoutMs: 30_000, intervalMs: 1000, description: `the hook calls of ${name} to settle` }
    )
  }

  before(async () => {
    plane = await startControlPlane({
      crds: [
        ...METACONTROLLER_CRDS,
        parentCrd.crd,
        childCrd.crd,
        decorated.targetCrd.crd,
        decorated.attachmentCrd.crd,
      ],
    })
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    })
    hook = await serveHook((body) => {
      const { parent } = body as { parent: KubeObject }
      const name = parent.metadata.name ?? ''
      calls.set(name, (calls.get(name) ?? 0) + 1)
      // Parents named bad-* are synced once (their child exists), then their hook fails.
      if (name.startsWith('bad-') && (calls.get(name) ?? 0) > 1) throw new Error('hook refused')
      return {
        children: [
          {
            apiVersion: childCrd.apiVersion,
            kind: 'SrChild',
            metadata: { name, labels: { app: name } },
          },
        ],
      }
    })
    await plane.client.create(CCS, {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: ns },
      // No resync within the test: every sync after the first is one the test caused.
      spec: { ...world.ccSpec(hook.url, ns), resyncPeriodSeconds: 3600 },
    })
  })

  after(async () => {
    await stopEngines()
    await plane.client.delete(CCS, ns).catch(() => undefined)
    await plane.client.delete(DCS, ns).catch(() => undefined)
    await plane.client.delete(NAMESPACES, ns).catch(() => undefined)
    await hook.close()
    await plane.stop()
  })

  it('one replica syncs a requested parent once and answers ok, or the hook’s error', async () => {
    start([])
    await createParent('one')
    await createParent('bad-one')
    await childOf('one')
    await childOf('bad-one')
    await requestSync('one', 'n1')
    assert.deepEqual(await answer('one', 'n1'), { nonce: 'n1', ok: true })
    // The creation's own syncs (child added, status written) are over once the count holds.
    const before = await settledCalls('one')
    // An answer is an update of the parent too; it must not cause a sync of its own.
    await requestSync('one', 'n2')
    assert.deepEqual(await answer('one', 'n2'), { nonce: 'n2', ok: true })
    await requestSync('one', 'n3')
    assert.deepEqual(await answer('one', 'n3'), { nonce: 'n3', ok: true })
    assert.equal(
      (await settledCalls('one')) - before,
      2,
      'one hook call per request, none per answer'
    )

    await requestSync('bad-one', 'n4')
    const failed = await answer('bad-one', 'n4')
    assert.equal(failed.ok, false)
    assert.match(failed.reason ?? '', /unsupported status code: 500 .*hook refused/)

    // A DecoratorController's target is answered the same way.
    const decorations: string[] = []
    const decoratorHook = await serveHook((body) => {
      decorations.push((body as { object: KubeObject }).object.metadata.name ?? '')
      return { labels: { decorated: 'yes' } }
    })
    try {
      await plane.client.create(DCS, {
        apiVersion: 'metacontroller.k8s.io/v1alpha1',
        kind: 'DecoratorController',
        metadata: { name: ns },
        spec: { ...decorated.dcSpec(decoratorHook.url, ns), resyncPeriodSeconds: 3600 },
      })
      await plane.client.create(decorated.targetCrd.ref, decorated.targetObject('target', ns))
      await waitFor(() => decorations.includes('target') || undefined, {
        timeoutMs: 30_000,
        description: 'the first decoration',
      })
      await plane.client.patch(
        decorated.targetCrd.ref,
        'target',
        { metadata: { annotations: { [SYNC_REQUEST_ANNOTATION]: 'd1' } } },
        { namespace: ns, type: 'merge' }
      )
      const result = await waitFor(
        async () => {
          const target = await plane.client.get(decorated.targetCrd.ref, 'target', {
            namespace: ns,
          })
          const parsed = syncResultOf(target)
          return parsed?.nonce === 'd1' ? parsed : undefined
        },
        { timeoutMs: 30_000, intervalMs: 100, description: 'the answer to d1' }
      )
      assert.deepEqual(result, { nonce: 'd1', ok: true })
    } finally {
      await plane.client.delete(DCS, ns).catch(() => undefined)
      await decoratorHook.close()
    }
    await stopEngines()
  })

  it('with leader election, the leader answers and the standby writes nothing', async () => {
    const election = [
      '--leader-election',
      '--leader-election-namespace',
      ns,
      '--leader-election-id',
      `${ns}-lease`,
      '--leader-election-lease-duration',
      '4s',
      '--leader-election-renew-deadline',
      '3s',
      '--leader-election-retry-period',
      '500ms',
    ]
    const a = start(election)
    const b = start(election)
    const leads = (e: SpawnedEngine): boolean =>
      e.lines.some((l) => l['msg'] === 'Successfully acquired lease')
    await waitFor(() => leads(a) || leads(b), { timeoutMs: 60_000, description: 'a leader' })
    const standby = leads(a) ? b : a
    await standby.line('started controller', 60_000)
    await createParent('two')
    await childOf('two')
    await requestSync('two', 'n5')
    assert.deepEqual(await answer('two', 'n5'), { nonce: 'n5', ok: true })
    assert.equal(await standby.writes(), 0, 'the standby wrote nothing, answers included')
    await stopEngines()
  })

  it('with sharding, each parent is answered by its owner', async () => {
    const sharded = (identity: string): string[] => [
      '--sharding',
      '--sharding-namespace',
      ns,
      '--sharding-ring',
      ns,
      '--sharding-identity',
      identity,
      '--sharding-lease-duration',
      '8s',
      '--sharding-renew-deadline',
      '6s',
      '--sharding-retry-period',
      '1s',
    ]
    const replicas = [start(sharded('r1')), start(sharded('r2'))]
    const ringOf = (e: SpawnedEngine): string =>
      JSON.stringify(e.lines.filter((l) => l['msg'] === 'serving a ring').at(-1)?.['members'])
    await waitFor(() => replicas.every((e) => ringOf(e) === '["r1","r2"]') || undefined, {
      timeoutMs: 60_000,
      description: 'a ring of r1 and r2',
    })
    const names = Array.from({ length: 6 }, (_, i) => `sh-${i}`)
    for (const name of names) await createParent(name)
    for (const name of names) await childOf(name)
    for (const name of names) await requestSync(name, `n-${name}`)
    for (const name of names) {
      assert.deepEqual(await answer(name, `n-${name}`), { nonce: `n-${name}`, ok: true })
    }
    // Both replicas served some of the parents, so both answered some of the requests.
    for (const replica of replicas) assert.ok((await replica.writes()) > 0)
    await stopEngines()
  })
})
