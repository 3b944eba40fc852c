// callCompositeHook and callDecoratorHook refuse what the engine refuses: the same checks on the
// answer (given the controller manifest: declared types, the parent's namespace, names, the
// selector) and, given the CRD, a fixture parent that does not match its schema.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { crdFixture } from '../../test/support/crd-fixture.js'
import type { KubeObject } from '../core/kube-object.js'
import { InvalidDesiredChildError } from '../api/desired-children.js'
import { callCompositeHook, callDecoratorHook } from './call-hook.js'
import { defineCompositeHook, defineDecoratorHook } from './hook-types.js'
import { inProcessDecoratorHooks } from './in-process.js'
import type { ConfigMap, NetworkPolicy, Service } from './kube-types.js'

interface Site {
  apiVersion: 'example.com/v1'
  kind: 'Site'
  metadata: { name: string; namespace?: string; uid?: string }
  spec: { replicas: number }
}

const site: Site = {
  apiVersion: 'example.com/v1',
  kind: 'Site',
  metadata: { name: 'web', namespace: 'team-a', uid: 'u1' },
  spec: { replicas: 1 },
}

const controller: KubeObject = {
  apiVersion: 'metacontroller.k8s.io/v1alpha1',
  kind: 'CompositeController',
  metadata: { name: 'sites' },
  spec: {
    generateSelector: true,
    parentResource: { apiVersion: 'example.com/v1', resource: 'sites' },
    childResources: [{ apiVersion: 'v1', resource: 'configmaps' }],
    hooks: { sync: { webhook: { url: 'http://hook/sync' } } },
  },
}

const crd = crdFixture({
  kind: 'Site',
  plural: 'sites',
  scope: 'Namespaced',
  schema: {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['replicas'],
        properties: { replicas: { type: 'integer', minimum: 1 } },
      },
    },
  },
})

const configMap = (namespace?: string): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'web', ...(namespace === undefined ? {} : { namespace }) },
})

describe('callCompositeHook runs the engine checks on the answer', () => {
  it('refuses a child in another namespace than its parent, with the engine message', async () => {
    const sync = defineCompositeHook<Site, ConfigMap>(() => ({
      children: [configMap('kube-system')],
    }))
    await assert.rejects(
      callCompositeHook(sync, { parent: site }),
      (error: unknown) =>
        error instanceof InvalidDesiredChildError &&
        error.message ===
          'desired child ConfigMap kube-system/web is in namespace kube-system, but its parent is ' +
            'in team-a; children of a namespaced parent must share its namespace'
    )
  })

  it('refuses a child type the controller does not declare', async () => {
    const sync = defineCompositeHook<Site, ConfigMap | Service>(() => ({
      children: [configMap(), { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' } }],
    }))
    await assert.rejects(
      callCompositeHook(sync, { parent: site, controller }),
      /desired child Service web has type Service\.v1, which is not in childResources \(declared: ConfigMap\.v1\)/
    )
    // Without the manifest, nothing says which types are declared.
    assert.equal((await callCompositeHook(sync, { parent: site })).children.length, 2)
  })

  it('refuses two children with one name, and accepts a declared child', async () => {
    const twice = defineCompositeHook<Site, ConfigMap>(() => ({
      children: [configMap(), configMap()],
    }))
    await assert.rejects(
      callCompositeHook(twice, { parent: site, controller }),
      /desired child ConfigMap team-a\/web appears twice/
    )
    const once = defineCompositeHook<Site, ConfigMap>(() => ({ children: [configMap()] }))
    assert.equal((await callCompositeHook(once, { parent: site, controller })).children.length, 1)
  })

  it('refuses children whose labels miss the parent selector', async () => {
    const withSelector: KubeObject = {
      ...controller,
      spec: { ...(controller['spec'] as object), generateSelector: false },
    }
    const parent = { ...site, spec: { replicas: 1, selector: { matchLabels: { app: 'web' } } } }
    const sync = defineCompositeHook<typeof parent, ConfigMap>(() => ({
      children: [configMap()],
    }))
    await assert.rejects(
      callCompositeHook(sync, { parent, controller: withSelector }),
      /labels on desired child ConfigMap team-a\/web don't match parent selector/
    )
  })

  it('checks the fixture parent against the CRD first, as serveHooks does', async () => {
    let called = false
    const sync = defineCompositeHook<Site, ConfigMap>(() => {
      called = true
      return {}
    })
    const bad = { ...site, spec: { replicas: 0 } }
    await assert.rejects(
      callCompositeHook(sync, { parent: bad, parentCrd: crd }),
      /^TypeError: fixture parent Site team-a\/web does not match its CRD schema: spec\.replicas: Invalid value: 0: should be greater than or equal to 1$/
    )
    assert.equal(called, false)
    await callCompositeHook(sync, { parent: site, parentCrd: crd })
    assert.equal(called, true)
  })
})

describe('callDecoratorHook with kubernetes-types objects', () => {
  const service: Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'team-a', uid: 's1' },
  }
  const policy = (namespace?: string): NetworkPolicy => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'web', ...(namespace === undefined ? {} : { namespace }) },
    spec: { podSelector: {} },
  })
  const decorator: KubeObject = {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'DecoratorController',
    metadata: { name: 'netpol' },
    spec: {
      resources: [{ apiVersion: 'v1', resource: 'services' }],
      attachments: [{ apiVersion: 'networking.k8s.io/v1', resource: 'networkpolicies' }],
      hooks: { sync: { webhook: { url: 'http://hook/sync' } } },
    },
  }

  it('types Service targets and NetworkPolicy attachments without casts', async () => {
    const sync = defineDecoratorHook<Service, NetworkPolicy>(({ object }) => ({
      labels: { protected: 'true' },
      attachments: [policy(object.metadata?.namespace)],
    }))
    const out = await callDecoratorHook(sync, { object: service, controller: decorator })
    const [attachment] = out.attachments
    assert.deepEqual(attachment?.spec?.podSelector, {})
    // The same hook, in-process: typed the same way, no cast.
    const hooks = inProcessDecoratorHooks({ sync })
    assert.equal(typeof hooks.sync, 'function')
  })

  it('refuses an attachment in another namespace, with the engine message', async () => {
    const sync = defineDecoratorHook<Service, NetworkPolicy>(() => ({
      attachments: [policy('kube-system')],
    }))
    await assert.rejects(
      callDecoratorHook(sync, { object: service, controller: decorator }),
      /desired child NetworkPolicy kube-system\/web is in namespace kube-system, but its parent is in team-a/
    )
  })

  it('refuses an attachment type the controller does not declare', async () => {
    const sync = defineDecoratorHook<Service, ConfigMap>(() => ({ attachments: [configMap()] }))
    await assert.rejects(
      callDecoratorHook(sync, { object: service, controller: decorator }),
      /has type ConfigMap\.v1, which is not in attachments \(declared: NetworkPolicy\.networking\.k8s\.io\/v1\)/
    )
  })
})
