// Proves the local control plane behaves as a real Kubernetes API: kubectl and our client share
// its kubeconfig, CRDs become Established, watches deliver events, the garbage collector follows
// ownerReferences and namespace deletion completes. Runs against the plane that
// scripts/run-tests.mjs starts (or the cluster in KUBECONFIG with METACTL_USE_EXISTING_CLUSTER=1).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { readWatchEvents } from '../../src/kube/watch-event.js'
import { NotFoundError } from '../../src/kube/api-error.js'
import type { ResourceRef } from '../../src/kube/dynamic-client.js'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { CONFIGMAPS, NAMESPACES } from '../../src/kube/well-known-resources.js'

const run = promisify(execFile)
const WIDGETS: ResourceRef = {
  group: 'test.metacontroller-ts.dev',
  version: 'v1',
  resource: 'widgets',
  namespaced: true,
}

function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`
}

async function isGone(check: () => Promise<unknown>): Promise<boolean> {
  try {
    await check()
    return false
  } catch (error) {
    if (error instanceof NotFoundError) return true
    throw error
  }
}

describe('local control plane', () => {
  let plane: ControlPlane
  let namespace: string

  before(async () => {
    plane = await startControlPlane({ crds: ['test/fixtures/crds/widgets.yaml'] })
    namespace = uniqueName('cp-test')
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    })
  })

  after(async () => {
    await plane.client.delete(NAMESPACES, namespace).catch(() => undefined)
    await plane.stop()
  })

  it('serves kubectl through the generated kubeconfig', async () => {
    const { stdout } = await run('kubectl', [
      '--kubeconfig',
      plane.kubeconfigPath,
      'get',
      'namespaces',
      '-o',
      'jsonpath={.items[*].metadata.name}',
    ])
    const names = stdout.split(' ')
    assert.ok(names.includes('default'), `kubectl saw namespaces: ${stdout}`)
    assert.ok(names.includes('kube-system'), `kubectl saw namespaces: ${stdout}`)
  })

  it('serves our client through the same credentials', async () => {
    const list = await plane.client.list(NAMESPACES)
    assert.ok(list.items.some((ns) => ns.metadata.name === namespace))
    assert.match(list.metadata.resourceVersion ?? '', /^\d+$/)
  })

  it('installs a CRD that is Established and accepts objects validated by its schema', async () => {
    const created = await plane.client.create(WIDGETS, {
      apiVersion: 'test.metacontroller-ts.dev/v1',
      kind: 'Widget',
      metadata: { name: 'valid', namespace },
      spec: { size: 3 },
    })
    assert.equal((created['spec'] as { size: number }).size, 3)
    await assert.rejects(
      plane.client.create(WIDGETS, {
        apiVersion: 'test.metacontroller-ts.dev/v1',
        kind: 'Widget',
        metadata: { name: 'invalid', namespace },
        spec: { size: 0 },
      }),
      (error: Error) => error.name === 'InvalidError' && error.message.includes('spec.size')
    )
  })

  it('watches a custom object being created and deleted', async () => {
    const list = await plane.client.list(WIDGETS, { namespace })
    const controller = new AbortController()
    const stream = await plane.client.watch(WIDGETS, {
      namespace,
      resourceVersion: list.metadata.resourceVersion ?? '',
      signal: controller.signal,
    })
    const events: { type: string; name: string }[] = []
    const seen = (async () => {
      for await (const event of readWatchEvents(stream.body)) {
        events.push({ type: event.type, name: event.object.metadata.name ?? '' })
        if (event.type === 'DELETED' && event.object.metadata.name === 'watched') return
      }
    })()
    await plane.client.create(WIDGETS, {
      apiVersion: 'test.metacontroller-ts.dev/v1',
      kind: 'Widget',
      metadata: { name: 'watched', namespace },
      spec: { size: 1 },
    })
    await plane.client.delete(WIDGETS, 'watched', { namespace })
    await seen
    controller.abort()
    assert.deepEqual(
      events.filter((e) => e.name === 'watched').map((e) => e.type),
      ['ADDED', 'DELETED']
    )
  })

  it('garbage-collects a dependent when its owner is deleted', async () => {
    const owner = await plane.client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'owner', namespace },
    })
    await plane.client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'dependent',
        namespace,
        ownerReferences: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid ?? '' },
        ],
      },
    })
    await plane.client.delete(CONFIGMAPS, 'owner', { namespace })
    await waitFor(() => isGone(() => plane.client.get(CONFIGMAPS, 'dependent', { namespace })), {
      timeoutMs: 30_000,
      description: 'the dependent ConfigMap to be garbage-collected',
    })
  })

  it('completes a namespace deletion, removing its contents', async () => {
    const doomed = uniqueName('doomed')
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: doomed },
    })
    await plane.client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'content', namespace: doomed },
    })
    await plane.client.delete(NAMESPACES, doomed)
    await waitFor(() => isGone(() => plane.client.get(NAMESPACES, doomed)), {
      timeoutMs: 60_000,
      description: `namespace ${doomed} to finish terminating`,
    })
  })
})
