// What operators see of hooks: upstream's metacontroller_* and controller_runtime_reconcile_*
// metrics, Events a hook asks for (the `events` response extension), and ETag mode (spec §2.8):
// a converged resync sends If-None-Match and gets 304/412 with no response bodies.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import { waitFor } from '../../src/testing/index.js'
import { EngineFixture, isolatedComposite } from '../support/engine-fixture.js'

const { parentCrd, childCrd, parentObject, ccSpec } = isolatedComposite('ObsParent', 'ObsChild')

function child(name: string): KubeObject {
  return {
    apiVersion: childCrd.apiVersion,
    kind: 'ObsChild',
    metadata: { name, labels: { app: name } },
  }
}

/** One request an ETag hook answered. */
interface EtagExchange {
  readonly parent: string
  readonly ifNoneMatch: string | undefined
  readonly status: number
  readonly bodyBytes: number
}

/** A hook whose ETag is a hash of the request: the same request gets 304 (or 412), no body. */
async function serveEtagHook(): Promise<{
  url: string
  exchanges: EtagExchange[]
  close(): Promise<void>
}> {
  const exchanges: EtagExchange[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks)
      const body = JSON.parse(raw.toString('utf8')) as { parent: KubeObject }
      const name = body.parent.metadata.name ?? ''
      const etag = `"${createHash('sha256').update(raw).digest('hex').slice(0, 32)}"`
      const ifNoneMatch = req.headers['if-none-match']
      if (ifNoneMatch === etag) {
        // Both answers mean "unchanged"; odd-numbered parents get 412 to cover that path.
        const status = Number(name.split('-')[1]) % 2 === 1 ? 412 : 304
        exchanges.push({ parent: name, ifNoneMatch, status, bodyBytes: 0 })
        res.writeHead(status, { etag }).end()
        return
      }
      const text = JSON.stringify({ children: [child(name)], status: { synced: true } })
      exchanges.push({ parent: name, ifNoneMatch, status: 200, bodyBytes: text.length })
      res.writeHead(200, { 'content-type': 'application/json', etag }).end(text)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sync`,
    exchanges,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => {
          resolve()
        })
      }),
  }
}

/** The value of the first sample line of `text` matching `name` and every label in `labels`. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue
    const ok = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))
    if (ok) return Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return undefined
}

describe('hook observability', () => {
  let fx: EngineFixture

  before(async () => {
    fx = await EngineFixture.start()
    await fx.crds(parentCrd.crd, childCrd.crd)
  })

  after(async () => {
    await fx.stop()
  })

  it('records the events a sync response lists on the parent, and exports hook metrics', async () => {
    const ns = await fx.namespace()
    const hook = await fx.hook((body) => {
      const name = (body as { parent: KubeObject }).parent.metadata.name ?? ''
      return {
        children: [child(name)],
        status: {},
        events: [
          { type: 'Warning', reason: 'QuotaLow', message: `quota low for ${name}` },
          { reason: 'Provisioned', message: 'all children created' },
        ],
      }
    })
    const cc = `obs-${ns}`
    await fx.compositeController(cc, ccSpec(hook.url, ns))
    await fx.client.create(parentCrd.ref, parentObject('e', ns))
    const warning = await fx.waitForEvent(ns, 'QuotaLow', 'quota low for e', 'e')
    assert.equal(warning['type'], 'Warning')
    assert.deepEqual(warning['source'], { component: 'metacontroller' })
    const normal = await fx.waitForEvent(ns, 'Provisioned', 'all children created', 'e')
    assert.equal(normal['type'], 'Normal')

    const text = await fx.engine.metrics.render()
    const constant = {
      url: hook.url,
      controller_name: cc,
      controller_type: 'CompositeController',
    }
    assert.ok(
      (sample(text, 'metacontroller_sync_requests_total', {
        ...constant,
        code: '200',
        method: 'post',
      }) ?? 0) >= 1,
      'requests_total counts the 200s'
    )
    assert.ok(
      (sample(text, 'metacontroller_sync_request_duration_histogram_seconds_bucket', {
        ...constant,
        method: 'post',
        le: '+Inf',
      }) ?? 0) >= 1,
      'the duration histogram observed the calls'
    )
    // A sync may still be in flight at the scrape; once the parent converged, none is.
    await waitFor(
      async () =>
        sample(
          await fx.engine.metrics.render(),
          'metacontroller_sync_in_flight_requests',
          constant
        ) === 0,
      { timeoutMs: 30_000, description: 'no sync in flight' }
    )
    assert.match(text, /# TYPE metacontroller_finalize_requests_total counter/)
    assert.match(text, /# TYPE metacontroller_customize_in_flight_requests gauge/)
    assert.ok(
      (sample(text, 'controller_runtime_reconcile_total', {
        controller: `CompositeController-${cc}`,
        result: 'success',
      }) ?? 0) >= 1,
      'reconciles of the hosted controller are counted'
    )
    assert.ok(
      (sample(text, 'controller_runtime_reconcile_total', {
        controller: 'compositecontroller-metacontroller',
        result: 'success',
      }) ?? 0) >= 1,
      'reconciles of the meta-controller are counted'
    )
    assert.match(
      text,
      /controller_runtime_reconcile_time_seconds_bucket\{le="0.15",controller="CompositeController-obs-/
    )
    // The existing series stay.
    assert.match(text, /rest_client_requests_total\{/)
    assert.match(text, /workqueue_adds_total\{name="CompositeController-obs-/)
  })

  it('sends no response bodies on a converged resync in ETag mode (304 and 412)', async () => {
    const ns = await fx.namespace()
    const hook = await serveEtagHook()
    fx.onTeardown(() => hook.close())
    const parents = Number(process.env['METACTL_ETAG_PARENTS'] ?? 100)
    await fx.compositeController(`etag-${ns}`, {
      ...ccSpec('', ns),
      hooks: { sync: { webhook: { url: hook.url, etag: { enabled: true } } } },
      resyncPeriodSeconds: 2,
    })
    const names = Array.from({ length: parents }, (_, i) => `p-${i}`)
    for (const name of names) await fx.client.create(parentCrd.ref, parentObject(name, ns))
    // Converged: every parent has been answered "unchanged" at least once.
    await waitFor(
      () => {
        const unchanged = new Set(
          hook.exchanges.filter((e) => e.status !== 200).map((e) => e.parent)
        )
        return names.every((n) => unchanged.has(n)) ? true : undefined
      },
      { timeoutMs: 180_000, intervalMs: 500, description: 'every parent answered 304/412' }
    )
    const mark = hook.exchanges.length
    // One more full resync of every parent after the mark.
    await waitFor(
      () => {
        const seen = new Set(hook.exchanges.slice(mark).map((e) => e.parent))
        return names.every((n) => seen.has(n)) ? true : undefined
      },
      { timeoutMs: 60_000, intervalMs: 500, description: 'a full resync after convergence' }
    )
    const resync = hook.exchanges.slice(mark)
    const bodies = resync.filter((e) => e.status === 200)
    assert.deepEqual(bodies, [], 'no 200 (no response body) after convergence')
    assert.ok(resync.every((e) => e.ifNoneMatch !== undefined && e.bodyBytes === 0))
    assert.ok(resync.some((e) => e.status === 304) && resync.some((e) => e.status === 412))
    // The cached body still drives the sync: the children exist and stay.
    const list = await fx.client.list(childCrd.ref, { namespace: ns })
    assert.equal(list.items.length, parents)
    process.stderr.write(
      `etag: ${parents} parents, ${resync.length} requests in a converged resync, ` +
        `${bodies.length} response bodies\n`
    )
  })
})
