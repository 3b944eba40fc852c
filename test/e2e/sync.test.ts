// `metactl sync` as a user runs it against `metactl run`: one object with --wait (synced, or the
// hook's error and exit 1), every parent of a controller, a request without --wait, and an object
// no controller serves (no answer: exit 1 after --timeout, one line).
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import { SYNC_REQUEST_ANNOTATION } from '../../src/core/sync-request.js'
import { startControlPlane } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import {
  CCS,
  METACONTROLLER_CRDS,
  NAMESPACES,
  isolatedComposite,
  serveHook,
} from '../support/engine-fixture.js'
import type { ServedHook } from '../support/engine-fixture.js'
import { metactl } from '../support/run-metactl.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'

const world = isolatedComposite('E2sParent', 'E2sChild')
const { parentCrd, childCrd } = world

describe('metactl sync', () => {
  let plane: ControlPlane
  let hook: ServedHook
  let engine: SpawnedEngine
  const ns = `e2s-${Date.now().toString(36)}`
  const sync = (...args: string[]) =>
    metactl(['sync', ...args, '--kubeconfig', plane.kubeconfigPath])

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
      if (name === 'broken') throw new Error('no image for broken')
      return {
        children: [
          {
            apiVersion: childCrd.apiVersion,
            kind: 'E2sChild',
            metadata: { name, labels: { app: name } },
          },
        ],
      }
    })
    await plane.client.create(CCS, {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: ns },
      spec: { ...world.ccSpec(hook.url, ns), resyncPeriodSeconds: 3600 },
    })
    engine = spawnEngine(plane.kubeconfigPath, ['--discovery-interval', '2s'])
    await engine.line('started controller', 60_000)
    for (const name of ['web', 'broken']) {
      await plane.client.create(parentCrd.ref, world.parentObject(name, ns))
    }
    // Not labelled for this test's controller: nothing serves it.
    await plane.client.create(parentCrd.ref, {
      apiVersion: parentCrd.apiVersion,
      kind: 'E2sParent',
      metadata: { name: 'orphan', namespace: ns },
    })
  })

  after(async () => {
    engine.kill()
    await engine.exited
    await plane.client.delete(CCS, ns).catch(() => undefined)
    await plane.client.delete(NAMESPACES, ns).catch(() => undefined)
    await hook.close()
    await plane.stop()
  })

  it('--wait prints that the object synced and exits 0', async () => {
    const result = await sync('e2sparent/web', '-n', ns, '--wait')
    assert.equal(result.stderr, '')
    assert.equal(result.stdout, `e2sparents.test.metacontroller-ts.dev/${ns}/web: synced\n`)
    assert.equal(result.code, 0)
  })

  it('--wait prints the hook’s error in one line and exits 1', async () => {
    const result = await sync('e2sparents.test.metacontroller-ts.dev/broken', '-n', ns, '--wait')
    assert.equal(result.code, 1)
    assert.equal(result.stdout, '')
    assert.match(
      result.stderr,
      new RegExp(
        `^e2sparents\\.test\\.metacontroller-ts\\.dev/${ns}/broken: sync failed: .*unsupported status code: 500 body: no image for broken\\n$`
      )
    )
  })

  it('--controller syncs every parent the controller serves, one line each', async () => {
    const result = await sync('--controller', ns, '--wait')
    assert.equal(result.code, 1, 'one of the two parents fails')
    assert.equal(result.stdout, `e2sparents.test.metacontroller-ts.dev/${ns}/web: synced\n`)
    assert.match(result.stderr, /\/broken: sync failed: /)
    assert.doesNotMatch(result.stdout + result.stderr, /orphan/)
  })

  it('without --wait, sets the request and returns', async () => {
    const result = await sync('e2sparent/web', '-n', ns)
    assert.equal(result.code, 0)
    const nonce = /: sync requested \((\S+)\)\n$/.exec(result.stdout)?.[1]
    assert.ok(nonce !== undefined, result.stdout)
    const parent = await plane.client.get(parentCrd.ref, 'web', { namespace: ns })
    assert.equal(parent.metadata.annotations?.[SYNC_REQUEST_ANNOTATION], nonce)
  })

  it('an object no controller serves gets no answer: exit 1 after --timeout, one line', async () => {
    const result = await sync('e2sparent/orphan', '-n', ns, '--wait', '--timeout', '2s')
    assert.equal(result.code, 1)
    assert.equal(
      result.stderr,
      `e2sparents.test.metacontroller-ts.dev/${ns}/orphan: no answer within 2 s: is \`metactl run\` running, with a controller whose selectors match it?\n`
    )
  })

  it('refuses a missing object, and neither or both of KIND/NAME and --controller', async () => {
    const missing = await sync('e2sparent/nope', '-n', ns, '--wait')
    assert.equal(missing.code, 1)
    assert.equal(missing.stderr, `metactl: E2sParent nope not found in namespace ${ns}\n`)
    const neither = await sync()
    assert.equal(neither.code, 1)
    assert.match(neither.stderr, /name one object \(KIND\/NAME\) or one controller/)
    const both = await sync('e2sparent/web', '-n', ns, '--controller', ns)
    assert.equal(both.code, 1)
    assert.equal(both.stderr, neither.stderr)
  })
})
