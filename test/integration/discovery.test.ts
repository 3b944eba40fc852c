// Proves API discovery against a real kube-apiserver: core and apps resources come with their
// scope and subresources in both aggregated and legacy mode, and a CRD created after the first
// refresh is resolvable (and announced to onChange listeners) without restarting anything.
// Runs against the plane that scripts/run-tests.mjs starts (or the cluster in KUBECONFIG with
// METACTL_USE_EXISTING_CLUSTER=1).
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import { Discovery } from '../../src/kube/discovery.js'
import type { DiscoveryTransport } from '../../src/kube/fetch-resource-map.js'
import { KubeTransport } from '../../src/kube/kube-transport.js'
import type { KubeRequest } from '../../src/kube/kube-transport.js'
import type { ResourceMap } from '../../src/kube/resource-map.js'
import { UnknownResourceError } from '../../src/kube/unknown-resource-error.js'
import { CRD_RESOURCE, startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'

/** Counts the discovery requests that reach the server, to tell refreshes apart. */
class CountingTransport implements DiscoveryTransport {
  readonly paths: string[] = []
  readonly #inner: KubeTransport

  constructor(inner: KubeTransport) {
    this.#inner = inner
  }

  requestJson<T>(req: KubeRequest): Promise<T> {
    this.paths.push(req.path)
    return this.#inner.requestJson<T>(req)
  }

  count(path: string): number {
    return this.paths.filter((p) => p === path).length
  }
}

function gadgetCrd(group: string): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `gadgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', shortNames: ['gdg'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: {
            status: {},
            scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
          },
          schema: {
            openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          },
        },
      ],
    },
  }
}

function assertCoreAndApps(map: ResourceMap, mode: string): void {
  const pods = map.lookup({ apiVersion: 'v1', kind: 'Pod' })
  assert.ok(pods, `${mode}: pods`)
  assert.deepEqual(pods.ref, { group: '', version: 'v1', resource: 'pods', namespaced: true })
  for (const sub of ['status', 'log', 'exec']) {
    assert.ok(
      pods.subresources.includes(sub),
      `${mode}: pods/${sub} in ${pods.subresources.join(', ')}`
    )
  }
  assert.ok(pods.shortNames.includes('po'))
  assert.equal(map.lookupResource('v1', 'pods/status')?.kind, 'Pod')

  const namespaces = map.lookup({ apiVersion: 'v1', kind: 'Namespace' })
  assert.equal(namespaces?.ref.namespaced, false, `${mode}: namespaces are cluster-scoped`)

  const deployments = map.lookup({ apiVersion: 'apps/v1', kind: 'Deployment' })
  assert.ok(deployments, `${mode}: deployments`)
  assert.deepEqual(deployments.ref, {
    group: 'apps',
    version: 'v1',
    resource: 'deployments',
    namespaced: true,
  })
  assert.ok(deployments.subresources.includes('scale'), `${mode}: deployments/scale`)
  assert.deepEqual(map.lookupResource('apps/v1', 'deployments/scale')?.responseKind, {
    group: 'autoscaling',
    version: 'v1',
    kind: 'Scale',
  })
  assert.equal(map.preferredVersion('apps'), 'v1')
  assert.equal(map.preferredVersion(''), 'v1')
  assert.deepEqual(map.staleGroupVersions(), [])
}

describe('API discovery against a real API server', () => {
  let plane: ControlPlane
  let transport: KubeTransport
  const discoveries: Discovery[] = []
  const group = `disc-${randomBytes(4).toString('hex')}.test.metacontroller-ts.dev`
  const crd = gadgetCrd(group)
  const crdName = crd.metadata.name ?? ''

  before(async () => {
    plane = await startControlPlane()
    transport = new KubeTransport(plane.config)
  })

  after(async () => {
    for (const discovery of discoveries) discovery.stop()
    await plane.client.delete(CRD_RESOURCE, crdName).catch(() => undefined)
    await transport.close()
    await plane.stop()
  })

  it('discovers core and apps resources with scope and subresources (aggregated)', async () => {
    const counting = new CountingTransport(transport)
    const errors: unknown[] = []
    const discovery = new Discovery(counting, { onError: (_gv, error) => errors.push(error) })
    discoveries.push(discovery)
    const map = await discovery.refresh()
    assertCoreAndApps(map, 'aggregated')
    // Aggregated discovery needs only the two root documents.
    assert.deepEqual(counting.paths, ['/api', '/apis'])
    assert.deepEqual(errors, [])
  })

  it('finds the same resources through legacy per-group-version discovery', async () => {
    const counting = new CountingTransport(transport)
    const discovery = new Discovery(counting, { aggregated: false })
    discoveries.push(discovery)
    const legacy = await discovery.refresh()
    assertCoreAndApps(legacy, 'legacy')
    assert.ok(counting.count('/api/v1') === 1 && counting.count('/apis/apps/v1') === 1)
    const aggregated = await new Discovery(transport).refresh()
    assert.deepEqual(
      legacy
        .resources()
        .map((r) => `${r.apiVersion}/${r.ref.resource} ${r.kind} [${r.subresources.join(',')}]`)
        .sort(),
      aggregated
        .resources()
        .map((r) => `${r.apiVersion}/${r.ref.resource} ${r.kind} [${r.subresources.join(',')}]`)
        .sort()
    )
  })

  it('resolves a CRD created after the first refresh, without a restart', async () => {
    const counting = new CountingTransport(transport)
    const errors: [string, unknown][] = []
    // A long interval, so that only the on-demand refresh of a miss can find the new CRD.
    const discovery = new Discovery(counting, {
      refreshIntervalMs: 600_000,
      onError: (gv, error) => errors.push([gv, error]),
    })
    discoveries.push(discovery)
    const changes: ResourceMap[] = []
    discovery.onChange((next) => changes.push(next))
    await discovery.refresh()
    discovery.start()
    assert.equal(changes.length, 1)
    const apiVersion = `${group}/v1`
    assert.equal(discovery.current().lookup({ apiVersion, kind: 'Gadget' }), undefined)

    await plane.installCrds([crd])
    // Established means servable; the discovery document follows within moments, so a miss in
    // that gap is retried (each retry is itself an on-demand refresh).
    const gadget = await waitFor(() => discovery.resolve({ apiVersion, kind: 'Gadget' }), {
      timeoutMs: 15_000,
      intervalMs: 200,
      description: `discovery to resolve ${apiVersion} Gadget`,
    })
    assert.deepEqual(gadget.ref, { group, version: 'v1', resource: 'gadgets', namespaced: true })
    assert.deepEqual([...gadget.subresources].sort(), ['scale', 'status'])
    assert.deepEqual(gadget.shortNames, ['gdg'])
    assert.ok(counting.count('/apis') >= 2, 'an on-demand refresh ran')
    assert.ok(
      changes.some((map) => map.lookup({ apiVersion, kind: 'Gadget' }) !== undefined),
      'onChange announced the new CRD'
    )
    const status = await discovery.resolveResource(apiVersion, 'gadgets/status')
    assert.equal(status.subresource, 'status')
    assert.equal(status.kind, 'Gadget')

    await plane.client.delete(CRD_RESOURCE, crdName)
    await waitFor(
      async () => (await discovery.refresh()).lookup({ apiVersion, kind: 'Gadget' }) === undefined,
      { timeoutMs: 30_000, intervalMs: 250, description: 'the deleted CRD to leave discovery' }
    )
    assert.equal(changes.at(-1)?.lookup({ apiVersion, kind: 'Gadget' }), undefined)
    await assert.rejects(
      discovery.resolve({ apiVersion, kind: 'Gadget' }),
      (error: unknown) =>
        error instanceof UnknownResourceError && error.message.includes('not yet Established')
    )
    assert.deepEqual(errors, [])
  })
})
