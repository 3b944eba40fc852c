// `metactl run` behind a forward proxy, as client-go and upstream's hook client honour one: the
// kubeconfig's proxy-url carries every API request through a CONNECT tunnel (loopback included:
// proxy-url has no exemptions), HTTP_PROXY carries http hook calls as absolute-form requests,
// and NO_PROXY sends a matching hook straight to its server.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { parse, stringify } from 'yaml'
import type { KubeObject } from '../../src/core/kube-object.js'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import {
  CCS,
  METACONTROLLER_CRDS,
  NAMESPACES,
  isolatedComposite,
  serveHook,
} from '../support/engine-fixture.js'
import type { ServedHook } from '../support/engine-fixture.js'
import { startForwardProxy } from '../support/forward-proxy.js'
import type { ForwardProxy } from '../support/forward-proxy.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'

const world = isolatedComposite('PxParent', 'PxChild')
const { parentCrd, childCrd } = world

/** A copy of `source` whose clusters all go through `proxyUrl`. */
function kubeconfigWithProxy(source: string, proxyUrl: string, dir: string): string {
  const doc = parse(readFileSync(source, 'utf8')) as {
    clusters: { cluster: Record<string, unknown> }[]
  }
  for (const entry of doc.clusters) entry.cluster['proxy-url'] = proxyUrl
  const path = join(dir, 'kubeconfig')
  writeFileSync(path, stringify(doc))
  return path
}

function childHook(): (body: unknown) => unknown {
  return (body) => {
    const { parent } = body as { parent: KubeObject }
    const name = parent.metadata.name ?? ''
    return {
      children: [
        {
          apiVersion: childCrd.apiVersion,
          kind: 'PxChild',
          metadata: { name, labels: { app: name } },
        },
      ],
    }
  }
}

describe('metactl run behind a forward proxy', () => {
  let plane: ControlPlane
  let proxy: ForwardProxy
  let proxiedHook: ServedHook
  let directHook: ServedHook
  let engine: SpawnedEngine | undefined
  const dir = mkdtempSync(join(tmpdir(), 'metactl-proxy-'))
  const suffix = Date.now().toString(36)
  const viaProxy = `px-${suffix}`
  const direct = `pxd-${suffix}`

  before(async () => {
    plane = await startControlPlane({ crds: [...METACONTROLLER_CRDS, parentCrd.crd, childCrd.crd] })
    proxy = await startForwardProxy({ hosts: ['hooks.proxied.test'] })
    proxiedHook = await serveHook(childHook())
    directHook = await serveHook(childHook())
    for (const ns of [viaProxy, direct]) {
      await plane.client.create(NAMESPACES, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: ns },
      })
    }
  })

  after(async () => {
    engine?.kill()
    await engine?.exited
    for (const ns of [viaProxy, direct]) {
      await plane.client.delete(CCS, ns).catch(() => undefined)
      await plane.client.delete(NAMESPACES, ns).catch(() => undefined)
    }
    await proxiedHook.close()
    await directHook.close()
    await proxy.close()
    await plane.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('reaches the API server through CONNECT, an http hook through the proxy, a NO_PROXY hook directly', async () => {
    const proxiedPort = new URL(proxiedHook.url).port
    const directPort = new URL(directHook.url).port
    // Names only the proxy resolves (to 127.0.0.1), so a call that skipped it could not arrive.
    const proxiedUrl = `http://hooks.proxied.test:${proxiedPort}/sync`
    // The bypassed name reaches its server through --hook-address, which only direct calls use.
    const directUrl = `http://hooks.direct.test:${directPort}/sync`
    for (const [ns, url] of [
      [viaProxy, proxiedUrl],
      [direct, directUrl],
    ] as const) {
      await plane.client.create(CCS, {
        apiVersion: 'metacontroller.k8s.io/v1alpha1',
        kind: 'CompositeController',
        metadata: { name: ns },
        spec: world.ccSpec(url, ns),
      })
    }
    const kubeconfig = kubeconfigWithProxy(plane.kubeconfigPath, proxy.url, dir)
    const apiAuthority = new URL(plane.config.server).host
    engine = spawnEngine(
      kubeconfig,
      [
        '--discovery-interval',
        '2s',
        '--hook-address',
        `hooks.direct.test:${directPort}=127.0.0.1:${directPort}`,
      ],
      {
        env: {
          ...process.env,
          HTTP_PROXY: proxy.url,
          HTTPS_PROXY: '',
          NO_PROXY: '.svc,direct.test',
        },
      }
    )
    const started = await engine.line('starting metactl run', 60_000)
    // The start line says where requests go, without credentials.
    assert.equal(started['apiProxy'], proxy.url)
    assert.equal(started['httpProxy'], proxy.url)
    assert.equal(started['noProxy'], '.svc,direct.test')
    await engine.line('started controller', 60_000)

    await plane.client.create(parentCrd.ref, world.parentObject('through', viaProxy))
    await plane.client.create(parentCrd.ref, world.parentObject('around', direct))
    for (const [name, ns] of [
      ['through', viaProxy],
      ['around', direct],
    ] as const) {
      await waitFor(
        () => plane.client.get(childCrd.ref, name, { namespace: ns }).catch(() => undefined),
        {
          timeoutMs: 30_000,
          description: `child ${ns}/${name}`,
        }
      )
    }

    const tunnels = proxy.requests.filter((r) => r.kind === 'connect')
    assert.ok(tunnels.length >= 1, 'the engine opened a CONNECT tunnel')
    assert.ok(
      tunnels.every((r) => r.target === apiAuthority),
      `every tunnel went to the API server ${apiAuthority}: ${tunnels.map((r) => r.target).join(', ')}`
    )
    const hookCalls = proxy.requests.filter((r) => r.kind === 'http')
    assert.ok(
      hookCalls.some((r) => r.target === proxiedUrl),
      `the proxied hook was called through the proxy: ${hookCalls.map((r) => r.target).join(', ')}`
    )
    assert.ok(proxiedHook.requests.length >= 1)
    assert.equal(
      hookCalls.filter((r) => r.target.includes('direct.test')).length,
      0,
      'the NO_PROXY hook never went through the proxy'
    )
    assert.ok(directHook.requests.length >= 1, 'the NO_PROXY hook was called directly')
  })
})
