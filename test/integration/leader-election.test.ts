// Leader election between `metactl run` processes on the real control plane: exactly one replica
// writes, a killed leader is replaced, a terminated one hands over at once, and a leader whose
// Lease is stolen stops writing.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import { ConflictError } from '../../src/kube/api-error.js'
import { LEASE_RESOURCE, leaseRecord, microTime } from '../../src/runtime/leader/leader-election.js'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import {
  CCS,
  isolatedComposite,
  METACONTROLLER_CRDS,
  NAMESPACES,
  serveHook,
} from '../support/engine-fixture.js'
import type { ServedHook } from '../support/engine-fixture.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'

const world = isolatedComposite('LeParent', 'LeChild')
const { parentCrd, childCrd } = world

describe('leader election', () => {
  let plane: ControlPlane
  let hook: ServedHook
  const ns = `le-${Date.now().toString(36)}`
  const leaseName = `metactl-${ns}`
  const engines: SpawnedEngine[] = []
  const electionArgs = [
    '--leader-election',
    '--leader-election-namespace',
    ns,
    '--leader-election-id',
    leaseName,
    '--leader-election-lease-duration',
    '4s',
    '--leader-election-renew-deadline',
    '3s',
    '--leader-election-retry-period',
    '500ms',
    '--discovery-interval',
    '2s',
  ]
  const start = (): SpawnedEngine => {
    const engine = spawnEngine(plane.kubeconfigPath, electionArgs)
    engines.push(engine)
    return engine
  }
  const leads = (engine: SpawnedEngine): boolean =>
    engine.lines.some((l) => l['msg'] === 'Successfully acquired lease')
  const child = (name: string): Promise<KubeObject | undefined> =>
    plane.client.get(childCrd.ref, name, { namespace: ns }).catch(() => undefined)
  const createParent = (name: string): Promise<KubeObject> =>
    plane.client.create(parentCrd.ref, world.parentObject(name, ns))

  before(async () => {
    plane = await startControlPlane({ crds: [...METACONTROLLER_CRDS, parentCrd.crd, childCrd.crd] })
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    })
    hook = await serveHook((body) => {
      const { parent } = body as { parent: KubeObject }
      const name = parent.metadata.name ?? ''
      return {
        status: { ok: true },
        children: [
          {
            apiVersion: childCrd.apiVersion,
            kind: 'LeChild',
            metadata: { name, labels: { app: name } },
          },
        ],
      }
    })
    await plane.client.create(CCS, {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: ns },
      spec: world.ccSpec(hook.url, ns),
    })
  })

  after(async () => {
    for (const engine of engines) engine.kill()
    await Promise.all(engines.map((e) => e.exited))
    await plane.client.delete(CCS, ns).catch(() => undefined)
    await plane.client.delete(NAMESPACES, ns).catch(() => undefined)
    await hook.close()
    await plane.stop()
  })

  it('lets exactly one of two replicas write, and the standby takes over a killed leader', async () => {
    const a = start()
    const b = start()
    await waitFor(() => leads(a) || leads(b), { timeoutMs: 30_000, description: 'a leader' })
    const [leader, standby] = leads(a) ? [a, b] : [b, a]
    await createParent('first')
    await waitFor(() => child('first'), { timeoutMs: 30_000, description: 'the first child' })
    // The standby synced its caches (it logged started controller) but wrote nothing.
    await standby.line('started controller', 30_000)
    assert.equal(leads(standby), false)
    assert.equal(await standby.writes(), 0, 'the standby made no API write')
    assert.ok((await leader.writes()) > 0, 'the leader wrote')

    leader.kill()
    const killedAt = Date.now()
    await createParent('second')
    await waitFor(() => child('second'), { timeoutMs: 15_000, description: 'the second child' })
    const convergedMs = Date.now() - killedAt
    assert.ok(leads(standby), 'the standby leads now')
    assert.ok(convergedMs < 15_000, `converged ${convergedMs} ms after the kill`)
  })

  it('hands over within 3 s when the leader gets SIGTERM', async () => {
    const leader = engines.find(
      (e) => leads(e) && e.process.exitCode === null && e.process.signalCode === null
    )
    assert.ok(leader !== undefined)
    const standby = start()
    await standby.line('started controller', 30_000)
    await standby.line('Attempting to acquire leader lease')
    leader.process.kill('SIGTERM')
    const terminatedAt = Date.now()
    await standby.line('Successfully acquired lease', 10_000)
    const takeoverMs = Date.now() - terminatedAt
    assert.equal(await leader.exited, 0)
    assert.ok(
      leader.lines.some((l) => l['msg'] === 'released the leader lease'),
      'the leader released its lease'
    )
    assert.ok(takeoverMs < 3000, `took over ${takeoverMs} ms after SIGTERM`)
    await createParent('third')
    await waitFor(() => child('third'), { timeoutMs: 15_000, description: 'the third child' })
  })

  it('warns when two engines run without leader election against one cluster', async () => {
    const unelected = ['--leader-election-namespace', ns, '--leader-election-id', `${leaseName}-x`]
    const first = spawnEngine(plane.kubeconfigPath, unelected)
    engines.push(first)
    await first.line('serving controllers', 30_000)
    const second = spawnEngine(plane.kubeconfigPath, unelected)
    engines.push(second)
    const warning = (e: SpawnedEngine): boolean =>
      e.lines.some(
        (l) => l['level'] === 'warn' && String(l['msg']).startsWith('another engine is running')
      )
    await waitFor(() => warning(first) || warning(second), {
      timeoutMs: 20_000,
      description: 'a warning about the other engine',
    })
    for (const engine of [first, second]) engine.process.kill('SIGTERM')
    assert.deepEqual(await Promise.all([first.exited, second.exited]), [0, 0])
  })

  it('stops a leader whose lease is stolen before it writes again', async () => {
    const leader = engines.find(
      (e) => leads(e) && e.process.exitCode === null && e.process.signalCode === null
    )
    assert.ok(leader !== undefined)
    // The leader renews every 500 ms, so a renewal can land between our read and our write: the
    // thief, like any client, reads again and retries on a conflict.
    for (let attempt = 1; ; attempt++) {
      const lease = await plane.client.get(LEASE_RESOURCE, leaseName, { namespace: ns })
      const now = microTime(Date.now())
      try {
        await plane.client.update(LEASE_RESOURCE, {
          ...lease,
          spec: {
            ...leaseRecord(lease),
            holderIdentity: 'thief',
            leaseDurationSeconds: 3600,
            acquireTime: now,
            renewTime: now,
          },
        })
        break
      } catch (error) {
        if (!(error instanceof ConflictError) || attempt === 5) throw error
      }
    }
    const code = await Promise.race([
      leader.exited,
      new Promise((resolve) => setTimeout(resolve, 10_000, 'still running')),
    ])
    assert.equal(code, 1, 'the old leader exits with an error')
    const lost = leader.lines.find((l) => l['msg'] === 'leader election lost')
    assert.match(String(lost?.['reason']), /held by thief/)
    // Nobody leads now (the thief is no engine): a new parent is not synced by anyone.
    await createParent('orphan')
    await new Promise((resolve) => setTimeout(resolve, 3000))
    assert.equal(await child('orphan'), undefined)
  })
})
