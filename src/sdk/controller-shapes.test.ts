import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { crdFixture } from '../../test/support/crd-fixture.js'
import type { KubeObject } from '../core/kube-object.js'
import { callCompositeHook, callDecoratorHook } from './call-hook.js'
import { defineCompositeHook, defineDecoratorHook } from './hook-types.js'
import { serveHooks } from './serve-hooks.js'

const tenantCrd = (scope: 'Cluster' | 'Namespaced'): KubeObject =>
  crdFixture({
    kind: 'Tenant',
    plural: 'tenants',
    singular: 'tenant',
    scope,
    schema: {
      type: 'object',
      required: ['spec'],
      properties: {
        spec: { type: 'object', required: ['team'], properties: { team: { type: 'string' } } },
      },
    },
  })

const tenant: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'Tenant',
  metadata: { name: 'acme', uid: 't1' },
  spec: { team: 'a' },
}

const namespace: KubeObject = {
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'team-a', uid: 'n1', labels: { tenant: 'acme' } },
}

const tenantSync = defineCompositeHook(({ parent }) => ({
  children: [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: parent.metadata.name ?? '' } },
    {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'quota', namespace: parent.metadata.name ?? '' },
      spec: { hard: { pods: '10' } },
    },
  ],
}))

const denyAll = defineDecoratorHook(({ object }) => ({
  attachments: [
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'default-deny', namespace: object.metadata.name ?? '' },
      spec: { podSelector: {}, policyTypes: ['Ingress'] },
    },
  ],
}))

async function post(url: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, text: await res.text() }
}

describe('serveHooks checks each parent against the CRD of its own kind only', () => {
  it("answers a decorator route over Namespaces although the composite's CRD is given", async () => {
    const server = await serveHooks(
      { '/sync': tenantSync, '/decorate': denyAll },
      { port: 0, parentCrd: tenantCrd('Cluster'), log: () => undefined }
    )
    try {
      const decorated = await post(`${server.url}/decorate`, { object: namespace })
      assert.equal(decorated.status, 200, decorated.text)
      const bad = await post(`${server.url}/sync`, { parent: { ...tenant, spec: {} } })
      assert.equal(bad.status, 422)
      assert.match(bad.text, /parent Tenant acme does not match its CRD schema: spec\.team/)
      const good = await post(`${server.url}/sync`, { parent: tenant })
      assert.equal(good.status, 200, good.text)
    } finally {
      await server.close()
    }
  })
})

describe('the test helpers scope a parent by its CRD, the built-in kinds, or scope', () => {
  it('takes a Namespace target as cluster-scoped: its attachments name their namespace', async () => {
    const out = await callDecoratorHook(denyAll, { object: namespace })
    assert.equal(out.attachments[0]?.metadata.namespace, 'team-a')
  })

  it('takes a custom parent as cluster-scoped from scope, or from its CRD', async () => {
    const fromScope = await callCompositeHook(tenantSync, { parent: tenant, scope: 'Cluster' })
    assert.equal(fromScope.children.length, 2)
    const fromCrd = await callCompositeHook(tenantSync, {
      parent: tenant,
      parentCrd: tenantCrd('Cluster'),
    })
    assert.equal(fromCrd.children.length, 2)
  })

  it("keeps a custom parent of unknown scope in default, as the engine's namespaced parent", async () => {
    await assert.rejects(
      callCompositeHook(tenantSync, { parent: tenant }),
      /desired child ResourceQuota acme\/quota is in namespace acme, but its parent is in default/
    )
    await assert.rejects(
      callCompositeHook(tenantSync, { parent: tenant, parentCrd: tenantCrd('Namespaced') }),
      /but its parent is in default/
    )
  })
})
