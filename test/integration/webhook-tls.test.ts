// Hooks over TLS with authentication (spec §1.1, §2.1, §2.9): caBundle from a Secret, a
// ConfigMap or inline, client certificates (mTLS), bearer and basic auth, endpointConfigs matched
// by host; wrong settings give a Warning event and change nothing; a rotated Secret is picked up
// without restarting the engine.
import assert from 'node:assert/strict'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import { CONFIGMAPS, DECORATOR_CONTROLLERS, SECRETS } from '../../src/kube/well-known-resources.js'
import { NotFoundError } from '../../src/kube/api-error.js'
import { EngineFixture, isolatedComposite } from '../support/engine-fixture.js'
import { makeTestPki } from '../support/test-pki.js'
import type { TestPki } from '../support/test-pki.js'

const { parentCrd, childCrd, parentObject, ccSpec } = isolatedComposite('TlsParent', 'TlsChild')
const TOKEN = 'hook-token-1'
const ROTATED = 'hook-token-2'

/** An HTTPS hook that requires a client certificate and checks `authorization` per path. */
async function serveTlsHook(
  pki: TestPki,
  expected: { bearer: () => string; basic: string }
): Promise<{ port: number; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = []
  const server = createServer(
    {
      key: pki.serverKey,
      cert: pki.serverCert,
      ca: pki.caCert,
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const auth = req.headers.authorization ?? ''
        const socket: unknown = req.socket
        const subject = (socket as TLSSocket).getPeerCertificate().subject as
          { CN?: string } | undefined
        const peer = subject?.CN ?? ''
        requests.push(`${req.url ?? ''} ${auth} ${peer}`)
        const wanted =
          req.url === '/basic'
            ? `Basic ${Buffer.from(expected.basic).toString('base64')}`
            : `Bearer ${expected.bearer()}`
        if (auth !== wanted) {
          res.writeHead(401, { 'content-type': 'text/plain' }).end('bad credentials')
          return
        }
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          parent?: KubeObject
          object?: KubeObject
        }
        if (body.object !== undefined) {
          // A DecoratorController: label the target with the client certificate's name.
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ labels: { 'tls-peer': peer } }))
          return
        }
        const name = body.parent?.metadata.name ?? ''
        const child = {
          apiVersion: childCrd.apiVersion,
          kind: 'TlsChild',
          metadata: { name, labels: { app: name } },
          data: { peer },
        }
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ children: [child], status: { ok: true } }))
      })
    }
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => {
          resolve()
        })
      }),
  }
}

function secret(name: string, namespace: string, data: Record<string, string>): KubeObject {
  const encoded = Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])
  )
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, data: encoded }
}

describe('webhook TLS and auth', () => {
  let fx: EngineFixture
  let pki: TestPki
  let bearer = TOKEN
  let hook: Awaited<ReturnType<typeof serveTlsHook>>

  before(async () => {
    pki = makeTestPki()
    fx = await EngineFixture.start()
    await fx.crds(parentCrd.crd, childCrd.crd)
    hook = await serveTlsHook(pki, { bearer: () => bearer, basic: 'hook-user:s3cret' })
    fx.onTeardown(() => hook.close())
  })

  after(async () => {
    await fx.stop()
  })

  /** Creates the CA, client-certificate and token Secrets in `ns`. */
  async function credentials(ns: string, token = TOKEN): Promise<void> {
    await fx.client.create(SECRETS, secret('hook-ca', ns, { 'ca.crt': pki.caCert }))
    await fx.client.create(
      SECRETS,
      secret('hook-client', ns, { 'tls.crt': pki.clientCert, 'tls.key': pki.clientKey })
    )
    await fx.client.create(SECRETS, secret('hook-token', ns, { token }))
  }

  function bearerWebhook(ns: string, path = '/bearer'): Record<string, unknown> {
    return {
      url: `https://127.0.0.1:${hook.port}${path}`,
      caBundle: { secretRef: { name: 'hook-ca', namespace: ns } },
      clientTLS: { secretRef: { name: 'hook-client', namespace: ns } },
      authorization: { secretRef: { name: 'hook-token', namespace: ns, key: 'token' } },
    }
  }

  async function noChild(name: string, ns: string): Promise<void> {
    await assert.rejects(
      fx.client.get(childCrd.ref, name, { namespace: ns }),
      (error) => error instanceof NotFoundError
    )
  }

  it('calls an mTLS hook with a CA and client certificate from Secrets and a bearer token', async () => {
    const ns = await fx.namespace()
    await credentials(ns)
    await fx.compositeController(`tls-${ns}`, {
      ...ccSpec('', ns),
      hooks: { sync: { webhook: bearerWebhook(ns) } },
    })
    await fx.client.create(parentCrd.ref, parentObject('p', ns))
    const child = await fx.waitForObject(childCrd.ref, 'p', ns)
    assert.deepEqual(child['data'], { peer: 'metactl-client' }, 'the hook saw our client cert')
    assert.ok(hook.requests.some((r) => r === `/bearer Bearer ${TOKEN} metactl-client`))
  })

  it("times a new connection's DNS and TLS phases in upstream's hook metrics", async () => {
    const ns = await fx.namespace()
    await credentials(ns)
    const byName = `https://localhost:${hook.port}/bearer`
    const byAddress = `https://127.0.0.1:${hook.port}/bearer`
    await fx.compositeController(`phase-${ns}`, {
      ...ccSpec('', ns),
      hooks: { sync: { webhook: { ...bearerWebhook(ns), url: byName } } },
    })
    // The other controller and parent live in their own namespace, so the selectors differ.
    const ns2 = await fx.namespace()
    await credentials(ns2)
    await fx.compositeController(`phaseip-${ns}`, {
      ...ccSpec('', ns2),
      hooks: { sync: { webhook: bearerWebhook(ns2) } },
    })
    await fx.client.create(parentCrd.ref, parentObject('n', ns))
    await fx.client.create(parentCrd.ref, parentObject('i', ns2))
    await fx.waitForObject(childCrd.ref, 'n', ns)
    await fx.waitForObject(childCrd.ref, 'i', ns2)
    const text = await fx.engine.metrics.render()
    const count = (metric: string, url: string, event: string): number => {
      const labels = `url="${url}",controller_name="${url === byName ? 'phase' : 'phaseip'}-${ns}",controller_type="CompositeController",event="${event}"`
      const match = new RegExp(
        `^metacontroller_sync_${metric}_duration_histogram_seconds_count\\{${labels}\\} (\\d+)$`,
        'm'
      ).exec(text)
      return Number(match?.[1] ?? 0)
    }
    for (const event of ['dns_start', 'dns_done'])
      assert.ok(count('dns', byName, event) >= 1, event)
    for (const event of ['tls_handshake_start', 'tls_handshake_done']) {
      assert.ok(count('tls', byName, event) >= 1, event)
      assert.ok(count('tls', byAddress, event) >= 1, `${event} by address`)
    }
    // Go resolves no name for an IP literal, so upstream has no DNS observation there either.
    assert.equal(count('dns', byAddress, 'dns_start'), 0)
    const done = new RegExp(
      `^metacontroller_sync_tls_duration_histogram_seconds_sum\\{url="${byName}"[^}]*event="tls_handshake_done"\\} ([\\d.e-]+)$`,
      'm'
    ).exec(text)
    assert.ok(Number(done?.[1]) > 0, 'the handshake took some time after the request started')
  })

  it('uses endpointConfigs matched by host, with a ConfigMap CA and basic auth', async () => {
    const ns = await fx.namespace()
    await credentials(ns)
    await fx.client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'hook-ca', namespace: ns },
      data: { 'ca.crt': pki.caCert },
    })
    await fx.client.create(
      SECRETS,
      secret('hook-basic', ns, { username: 'hook-user', password: ' s3cret\n' })
    )
    await fx.compositeController(`ep-${ns}`, {
      ...ccSpec(`https://127.0.0.1:${hook.port}/basic`, ns),
      endpointConfigs: [
        { host: 'elsewhere.example:443', basicAuth: { secretRef: { name: 'x', namespace: ns } } },
        {
          host: `127.0.0.1:${hook.port}`,
          caBundle: { configMapRef: { name: 'hook-ca', namespace: ns } },
          clientTLS: { secretRef: { name: 'hook-client', namespace: ns } },
          basicAuth: { secretRef: { name: 'hook-basic', namespace: ns } },
        },
      ],
    })
    await fx.client.create(parentCrd.ref, parentObject('q', ns))
    await fx.waitForObject(childCrd.ref, 'q', ns)
  })

  it('records SyncError for wrong credentials, changes nothing, and picks up the rotated Secret', async () => {
    const ns = await fx.namespace()
    await credentials(ns, 'wrong-token')
    await fx.compositeController(`rot-${ns}`, {
      ...ccSpec('', ns),
      hooks: { sync: { webhook: bearerWebhook(ns) } },
    })
    await fx.client.create(parentCrd.ref, parentObject('r', ns))
    await fx.waitForEvent(ns, 'SyncError', 'unsupported status code: 401', 'r')
    await noChild('r', ns)
    const parent = await fx.client.get(parentCrd.ref, 'r', { namespace: ns })
    assert.equal(parent['status'], undefined, 'no status written after a failed hook')
    // Rotate: the hook now expects ROTATED, and the Secret is updated to it; no restart.
    bearer = ROTATED
    try {
      await fx.client.update(SECRETS, secret('hook-token', ns, { token: ROTATED }), {
        namespace: ns,
      })
      await fx.waitForObject(childCrd.ref, 'r', ns)
      await fx.waitForEvent('default', 'Started', `rot-${ns}`, `rot-${ns}`)
    } finally {
      bearer = TOKEN
    }
  })

  it('calls a DecoratorController webhook over mTLS with a bearer token', async () => {
    const ns = await fx.namespace()
    await credentials(ns)
    const name = `dc-${ns}`
    await fx.client.create(DECORATOR_CONTROLLERS, {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'DecoratorController',
      metadata: { name },
      spec: {
        resources: [
          {
            apiVersion: parentCrd.apiVersion,
            resource: parentCrd.ref.resource,
            labelSelector: { matchLabels: { 'dc-test': ns } },
          },
        ],
        hooks: { sync: { webhook: bearerWebhook(ns) } },
      },
    })
    fx.onTeardown(() => fx.client.delete(DECORATOR_CONTROLLERS, name).catch(() => undefined))
    const target = parentObject('d', ns)
    await fx.client.create(parentCrd.ref, {
      ...target,
      metadata: { ...target.metadata, labels: { 'dc-test': ns } },
    })
    await fx.waitForObject(
      parentCrd.ref,
      'd',
      ns,
      (o) => o.metadata.labels?.['tls-peer'] === 'metactl-client'
    )
  })

  it('reports a missing Secret as CreateError, then starts once the Secret exists', async () => {
    const ns = await fx.namespace()
    await fx.compositeController(`miss-${ns}`, {
      ...ccSpec('', ns),
      hooks: { sync: { webhook: bearerWebhook(ns) } },
    })
    await fx.client.create(parentCrd.ref, parentObject('m', ns))
    await fx.waitForEvent('default', 'CreateError', `Secret ${ns}/hook-ca not found`, `miss-${ns}`)
    await noChild('m', ns)
    await credentials(ns)
    await fx.waitForObject(childCrd.ref, 'm', ns)
  })

  it('refuses a caBundle that holds no certificate (CreateError)', async () => {
    const ns = await fx.namespace()
    await fx.compositeController(`badca-${ns}`, {
      ...ccSpec('', ns),
      hooks: {
        sync: {
          webhook: {
            url: `https://127.0.0.1:${hook.port}/bearer`,
            caBundle: { inline: 'not a certificate' },
          },
        },
      },
    })
    await fx.waitForEvent(
      'default',
      'CreateError',
      'no valid PEM-encoded certificates',
      `badca-${ns}`
    )
  })

  it('fails the handshake against a CA that did not sign the server (SyncError, no child)', async () => {
    const ns = await fx.namespace()
    await credentials(ns)
    await fx.compositeController(`hs-${ns}`, {
      ...ccSpec('', ns),
      hooks: {
        sync: {
          webhook: {
            ...bearerWebhook(ns),
            caBundle: { inline: pki.otherCaCert },
          },
        },
      },
    })
    await fx.client.create(parentCrd.ref, parentObject('h', ns))
    const event = await fx.waitForEvent(ns, 'SyncError', 'http error', 'h')
    assert.match(String(event['message']), /certificate/i)
    await noChild('h', ns)
  })
})
