// The StaticSite controller on a real control plane with a simulated node: the engine runs the
// hook in-process, creates the ConfigMap, the Deployment and the Service; kube-controller-manager
// and the scheduler run the Deployment's Pods (KWOK reports them Running and Ready), and the
// status follows the Deployment until every replica is ready; a new page updates the ConfigMap
// and rolls the Deployment, and the status says ready again only once it has rolled out.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { parse } from 'yaml'
import { inProcessHooks } from 'metacontroller-ts'
import type { KubeObject } from 'metacontroller-ts'
import { Engine } from 'metacontroller-ts/engine'
import { CONFIGMAPS, NAMESPACES, SERVICES } from 'metacontroller-ts/kube'
import type { ResourceRef } from 'metacontroller-ts/kube'
import { metacontrollerCrdFiles, startControlPlane, waitForParent } from 'metacontroller-ts/testing'
import type { ControlPlane } from 'metacontroller-ts/testing'
import { sync } from './hook.js'
import type { StaticSite } from './hook.js'

const SITES: ResourceRef = {
  group: 'static.example.com',
  version: 'v1',
  resource: 'staticsites',
  namespaced: true,
}
const dir = new URL('.', import.meta.url)

describe('StaticSite on a local cluster', { timeout: 180_000 }, () => {
  const namespace = `static-${randomBytes(3).toString('hex')}`
  let plane: ControlPlane
  let engine: Engine | undefined

  before(async () => {
    plane = await startControlPlane({
      crds: [...metacontrollerCrdFiles(), new URL('crd.yaml', dir).pathname],
    })
    engine = new Engine(plane.config, { watchCompositeControllers: false })
    await engine.start()
    const controller = parse(readFileSync(new URL('controller.yaml', dir), 'utf8')) as KubeObject
    await engine.addCompositeController({
      name: controller.metadata.name ?? '',
      spec: controller['spec'],
      hooks: inProcessHooks({ sync }),
    })
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    })
  })

  after(async () => {
    await engine?.stop()
    await plane.client.delete(NAMESPACES, namespace).catch(() => undefined)
    await plane.stop()
  })

  const site = { resource: SITES, name: 'hello', namespace }
  const readyStatus = (object: KubeObject): StaticSite['status'] | undefined => {
    const status = (object as unknown as StaticSite).status
    return status?.ready === true ? status : undefined
  }

  it('serves the page: status ready once the Deployment has every replica ready', async () => {
    const sample = parse(readFileSync(new URL('sample.yaml', dir), 'utf8')) as StaticSite
    await plane.client.create(SITES, {
      ...sample,
      metadata: { name: 'hello', namespace },
    })
    const status = await waitForParent(plane.client, site, readyStatus, {
      timeoutMs: 60_000,
      description: 'the StaticSite to be ready',
    })
    assert.equal(status.readyReplicas, 2)
    assert.equal(status.url, `http://hello.${namespace}.svc`)
    const page = await plane.client.get(CONFIGMAPS, 'hello-content', { namespace })
    assert.deepEqual(page['data'], { 'index.html': sample.spec.html })
    const service = await plane.client.get(SERVICES, 'hello', { namespace })
    assert.equal(service.metadata.ownerReferences?.[0]?.kind, 'StaticSite')
  })

  it('rolls out a new page and is ready again with its hash', async () => {
    const before = await waitForParent(plane.client, site, readyStatus)
    await plane.client.patch(
      SITES,
      'hello',
      { spec: { html: '<h1>v2</h1>' } },
      { namespace, type: 'merge' }
    )
    const after = await waitForParent(
      plane.client,
      site,
      (object) => {
        const status = readyStatus(object)
        return status !== undefined && status.contentHash !== before.contentHash
          ? status
          : undefined
      },
      { timeoutMs: 60_000, description: 'the new page to roll out' }
    )
    assert.equal(after.readyReplicas, 2)
    const page = await plane.client.get(CONFIGMAPS, 'hello-content', { namespace })
    assert.deepEqual(page['data'], { 'index.html': '<h1>v2</h1>' })
  })
})
