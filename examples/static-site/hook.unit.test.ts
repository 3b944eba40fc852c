// The StaticSite hook without a cluster: callCompositeHook with the controller manifest and the
// CRD, so the answer goes through the engine's checks (declared child types, namespaces, the
// generated selector) and the fixture through the CRD's schema.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { parse } from 'yaml'
import { callCompositeHook } from 'metacontroller-ts'
import type { ConfigMap, Deployment, KubeObject } from 'metacontroller-ts'
import { CONTENT_HASH_ANNOTATION, sync } from './hook.js'
import type { StaticSite } from './hook.js'

const dir = new URL('.', import.meta.url)
const controller = parse(readFileSync(new URL('controller.yaml', dir), 'utf8')) as KubeObject
const parentCrd: unknown = parse(readFileSync(new URL('crd.yaml', dir), 'utf8'))
const site = parse(readFileSync(new URL('sample.yaml', dir), 'utf8')) as StaticSite

const call = (parent: StaticSite, deployment?: Deployment) =>
  callCompositeHook(sync, {
    parent,
    controller,
    parentCrd,
    ...(deployment === undefined
      ? {}
      : {
          children: { 'Deployment.apps/v1': { [`default/${parent.metadata.name}`]: deployment } },
        }),
  })

describe('StaticSite sync hook', () => {
  it('asks for the page ConfigMap, an nginx Deployment mounting it and a Service', async () => {
    const out = await call(site)
    assert.deepEqual(
      out.children.map((c) => `${c.kind}/${c.metadata?.name ?? ''}`),
      ['ConfigMap/hello-content', 'Deployment/hello', 'Service/hello']
    )
    const [page, deployment] = out.children as [ConfigMap, Deployment]
    assert.equal(page.data?.['index.html'], site.spec.html)
    assert.equal(deployment.spec?.replicas, 2)
    assert.deepEqual(deployment.spec.template.spec?.volumes, [
      { name: 'content', configMap: { name: 'hello-content' } },
    ])
  })

  it('rolls the Deployment when the page changes', async () => {
    const hashOf = async (html: string): Promise<string | undefined> => {
      const out = await call({ ...site, spec: { ...site.spec, html } })
      const deployment = out.children[1] as Deployment
      return deployment.spec?.template.metadata?.annotations?.[CONTENT_HASH_ANNOTATION]
    }
    assert.notEqual(await hashOf('<p>a</p>'), await hashOf('<p>b</p>'))
    assert.equal(await hashOf('<p>a</p>'), await hashOf('<p>a</p>'))
  })

  it('reports ready only when the observed Deployment runs this page on every replica', async () => {
    const first = await call(site)
    assert.deepEqual(first.status, {
      readyReplicas: 0,
      ready: false,
      url: 'http://hello.default.svc',
      contentHash: first.status?.contentHash,
    })
    const wanted = first.children[1] as Deployment
    const observed = (readyReplicas: number, template = wanted.spec?.template): Deployment => ({
      ...wanted,
      metadata: { ...wanted.metadata, generation: 1 },
      spec: { ...wanted.spec, selector: wanted.spec?.selector ?? {}, template: template ?? {} },
      status: { observedGeneration: 1, updatedReplicas: 2, readyReplicas },
    })
    assert.equal((await call(site, observed(1))).status?.ready, false)
    assert.equal((await call(site, observed(2))).status?.ready, true)
    const oldPage = {
      ...wanted.spec?.template,
      metadata: { annotations: { [CONTENT_HASH_ANNOTATION]: 'old' } },
    }
    const rolling = await call(site, observed(2, oldPage))
    assert.equal(rolling.status?.ready, false, 'an old page on ready replicas is not ready')
    assert.equal(rolling.status.readyReplicas, 2)
  })

  it('refuses a StaticSite the API server would refuse, before the hook runs', async () => {
    await assert.rejects(
      call({ ...site, spec: { ...site.spec, html: '' } }),
      /fixture parent StaticSite default\/hello does not match its CRD schema: spec\.html/
    )
  })
})
