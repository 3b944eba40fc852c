// Discovery against a fake API server that renders one model of groups as either aggregated
// (APIGroupDiscoveryList v2) or legacy (APIVersions / APIGroupList / APIResourceList) documents.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApiError, NotFoundError } from './api-error.js'
import { Discovery } from './discovery.js'
import type { DiscoveryOptions } from './discovery.js'
import { AGGREGATED_DISCOVERY_ACCEPT } from './fetch-resource-map.js'
import type { DiscoveryTransport } from './fetch-resource-map.js'
import type { KubeRequest } from './kube-transport.js'
import type { ResourceMap } from './resource-map.js'
import { UnknownResourceError } from './unknown-resource-error.js'

interface FakeResource {
  readonly resource: string
  readonly kind: string
  readonly namespaced: boolean
  readonly subresources?: readonly string[]
}

interface FakeVersion {
  readonly version: string
  readonly freshness?: 'Current' | 'Stale'
  readonly resources: readonly FakeResource[]
}

interface FakeGroup {
  readonly name: string
  readonly versions: readonly FakeVersion[]
}

const CORE: FakeGroup = {
  name: '',
  versions: [
    {
      version: 'v1',
      resources: [
        {
          resource: 'pods',
          kind: 'Pod',
          namespaced: true,
          subresources: ['exec', 'log', 'status'],
        },
        { resource: 'namespaces', kind: 'Namespace', namespaced: false, subresources: ['status'] },
      ],
    },
  ],
}

const APPS: FakeGroup = {
  name: 'apps',
  versions: [
    {
      version: 'v1',
      resources: [
        {
          resource: 'deployments',
          kind: 'Deployment',
          namespaced: true,
          subresources: ['scale', 'status'],
        },
      ],
    },
  ],
}

const WIDGETS_GROUP = 'example.metacontroller-ts.dev'
const WIDGETS: FakeGroup = {
  name: WIDGETS_GROUP,
  versions: [
    {
      version: 'v1',
      resources: [
        { resource: 'widgets', kind: 'Widget', namespaced: true, subresources: ['status'] },
      ],
    },
  ],
}

const METRICS: FakeGroup = {
  name: 'metrics.k8s.io',
  versions: [
    { version: 'v1beta1', resources: [{ resource: 'pods', kind: 'PodMetrics', namespaced: true }] },
  ],
}

function aggregatedResource(group: string, version: string, r: FakeResource): unknown {
  return {
    resource: r.resource,
    responseKind: { group, version, kind: r.kind },
    scope: r.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: r.resource.replace(/s$/, ''),
    verbs: ['get', 'list', 'watch'],
    subresources: (r.subresources ?? []).map((sub) => ({
      subresource: sub,
      responseKind: sub === 'scale' ? { group: 'autoscaling', version: 'v1', kind: 'Scale' } : {},
      verbs: ['get'],
    })),
  }
}

function legacyResources(r: FakeResource): unknown[] {
  return [
    {
      name: r.resource,
      singularName: r.resource.replace(/s$/, ''),
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: ['get', 'list', 'watch'],
    },
    ...(r.subresources ?? []).map((sub) => ({
      name: `${r.resource}/${sub}`,
      singularName: '',
      namespaced: r.namespaced,
      ...(sub === 'scale' ? { group: 'autoscaling', version: 'v1', kind: 'Scale' } : {}),
      kind: sub === 'scale' ? 'Scale' : r.kind,
      verbs: ['get'],
    })),
  ]
}

/** A fake API server; `groups` and `failures` may change between requests. */
class FakeServer implements DiscoveryTransport {
  groups: FakeGroup[]
  mode: 'aggregated' | 'legacy' = 'aggregated'
  /** Path -> error thrown for it. */
  readonly failures = new Map<string, Error>()
  readonly requests: KubeRequest[] = []
  /** Holds every response until released, to make requests overlap. */
  gate: Promise<void> | undefined

  constructor(groups: FakeGroup[]) {
    this.groups = groups
  }

  count(path: string): number {
    return this.requests.filter((req) => req.path === path).length
  }

  async requestJson<T>(req: KubeRequest): Promise<T> {
    this.requests.push(req)
    // The answer is fixed when the request arrives, as a real server's would be.
    let outcome: { readonly body: unknown } | { readonly error: unknown }
    try {
      const failure = this.failures.get(req.path)
      if (failure !== undefined) throw failure
      outcome = { body: this.#respond(req) }
    } catch (error) {
      outcome = { error }
    }
    await this.gate
    if ('error' in outcome) throw outcome.error
    return outcome.body as T
  }

  #respond(req: KubeRequest): unknown {
    const named = this.groups.filter((g) => g.name !== '')
    const core = this.groups.filter((g) => g.name === '')
    const aggregated = this.mode === 'aggregated' && req.accept === AGGREGATED_DISCOVERY_ACCEPT
    if (req.path === '/api' || req.path === '/apis') {
      const groups = req.path === '/api' ? core : named
      if (aggregated) {
        return {
          kind: 'APIGroupDiscoveryList',
          apiVersion: 'apidiscovery.k8s.io/v2',
          metadata: {},
          items: groups.map((g) => ({
            metadata: g.name === '' ? {} : { name: g.name },
            versions: g.versions.map((v) => ({
              version: v.version,
              resources: v.resources.map((r) => aggregatedResource(g.name, v.version, r)),
              freshness: v.freshness ?? 'Current',
            })),
          })),
        }
      }
      if (req.path === '/api') {
        return {
          kind: 'APIVersions',
          versions: core.flatMap((g) => g.versions.map((v) => v.version)),
        }
      }
      return {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: named.map((g) => ({
          name: g.name,
          versions: g.versions.map((v) => ({
            groupVersion: `${g.name}/${v.version}`,
            version: v.version,
          })),
          preferredVersion: {
            groupVersion: `${g.name}/${g.versions[0]?.version ?? ''}`,
            version: g.versions[0]?.version ?? '',
          },
        })),
      }
    }
    for (const g of this.groups) {
      for (const v of g.versions) {
        const path = g.name === '' ? `/api/${v.version}` : `/apis/${g.name}/${v.version}`
        if (req.path === path) {
          return {
            kind: 'APIResourceList',
            apiVersion: 'v1',
            groupVersion: g.name === '' ? v.version : `${g.name}/${v.version}`,
            resources: v.resources.flatMap(legacyResources),
          }
        }
      }
    }
    throw new NotFoundError(`GET ${req.path}: 404 NotFound`, {
      statusCode: 404,
      reason: 'NotFound',
      request: { method: 'GET', path: req.path },
    })
  }
}

function unavailable(path: string): ApiError {
  return new ApiError(`GET ${path}: 503 ServiceUnavailable: service unavailable`, {
    statusCode: 503,
    reason: 'ServiceUnavailable',
    request: { method: 'GET', path },
  })
}

function makeDiscovery(
  server: FakeServer,
  options: DiscoveryOptions = {}
): { discovery: Discovery; errors: [string, unknown][] } {
  const errors: [string, unknown][] = []
  const discovery = new Discovery(server, {
    onDemandMinIntervalMs: 0,
    onError: (gv, error) => errors.push([gv, error]),
    ...options,
  })
  return { discovery, errors }
}

function withStale(group: FakeGroup): FakeGroup {
  return {
    ...group,
    versions: group.versions.map((v) => ({ ...v, freshness: 'Stale', resources: [] })),
  }
}

/** Polls a condition every 5 ms, failing after 2 s: timer tests must not depend on CPU load. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = performance.now() + 2000
  while (!condition()) {
    if (performance.now() > deadline) assert.fail('condition not met within 2 s')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

describe('Discovery refresh', () => {
  it('reads aggregated discovery in two requests', async () => {
    const server = new FakeServer([CORE, APPS, WIDGETS])
    const { discovery, errors } = makeDiscovery(server)
    const map = await discovery.refresh()
    assert.deepEqual(
      server.requests.map((r) => [r.path, r.accept]),
      [
        ['/api', AGGREGATED_DISCOVERY_ACCEPT],
        ['/apis', AGGREGATED_DISCOVERY_ACCEPT],
      ]
    )
    assert.equal(discovery.current(), map)
    assert.deepEqual(map.lookup({ apiVersion: 'v1', kind: 'Pod' })?.subresources, [
      'exec',
      'log',
      'status',
    ])
    assert.deepEqual(map.lookup({ apiVersion: 'apps/v1', kind: 'Deployment' })?.subresources, [
      'scale',
      'status',
    ])
    assert.equal(map.lookupResource('v1', 'namespaces')?.ref.namespaced, false)
    assert.equal(map.lookupResource('apps/v1', 'deployments/scale')?.kind, 'Scale')
    assert.equal(map.preferredVersion('apps'), 'v1')
    assert.deepEqual(errors, [])
  })

  it('falls back to per-group-version GETs when the server answers with legacy documents', async () => {
    const server = new FakeServer([CORE, APPS, WIDGETS])
    server.mode = 'legacy'
    const { discovery, errors } = makeDiscovery(server)
    const map = await discovery.refresh()
    assert.deepEqual(server.requests.map((r) => r.path).sort(), [
      '/api',
      '/api/v1',
      '/apis',
      '/apis/apps/v1',
      `/apis/${WIDGETS_GROUP}/v1`,
    ])
    assert.deepEqual(map.lookup({ apiVersion: 'v1', kind: 'Pod' })?.subresources, [
      'exec',
      'log',
      'status',
    ])
    assert.equal(map.lookupResource('apps/v1', 'deployments/scale')?.kind, 'Scale')
    assert.equal(
      map.lookup({ apiVersion: `${WIDGETS_GROUP}/v1`, kind: 'Widget' })?.ref.resource,
      'widgets'
    )
    assert.equal(map.preferredVersion(WIDGETS_GROUP), 'v1')
    assert.deepEqual(errors, [])
  })

  it('forces legacy discovery when aggregated is off', async () => {
    const server = new FakeServer([CORE, APPS])
    const { discovery } = makeDiscovery(server, { aggregated: false })
    const map = await discovery.refresh()
    assert.equal(server.requests[0]?.accept, 'application/json')
    assert.equal(server.count('/api/v1'), 1)
    assert.ok(map.lookup({ apiVersion: 'apps/v1', kind: 'Deployment' }))
  })

  it('keeps the previous data of a Stale aggregated group-version and reports it', async () => {
    const server = new FakeServer([CORE, APPS, METRICS])
    const { discovery, errors } = makeDiscovery(server)
    let changes = 0
    discovery.onChange(() => changes++)
    await discovery.refresh()
    assert.equal(changes, 1)
    server.groups = [CORE, APPS, withStale(METRICS)]
    const map = await discovery.refresh()
    const metrics = map.lookup({ apiVersion: 'metrics.k8s.io/v1beta1', kind: 'PodMetrics' })
    assert.equal(metrics?.ref.resource, 'pods')
    assert.equal(map.groupVersion('metrics.k8s.io/v1beta1')?.freshness, 'Stale')
    assert.deepEqual(map.staleGroupVersions(), ['metrics.k8s.io/v1beta1'])
    assert.ok(map.lookup({ apiVersion: 'apps/v1', kind: 'Deployment' }))
    assert.deepEqual(
      errors.map(([gv]) => gv),
      ['metrics.k8s.io/v1beta1']
    )
    assert.equal(changes, 1, 'a freshness flip alone is not a change')
  })

  it('keeps the previous data of a legacy group-version whose GET fails', async () => {
    const server = new FakeServer([CORE, APPS, METRICS])
    server.mode = 'legacy'
    const { discovery, errors } = makeDiscovery(server)
    await discovery.refresh()
    server.failures.set('/apis/metrics.k8s.io/v1beta1', unavailable('/apis/metrics.k8s.io/v1beta1'))
    const map = await discovery.refresh()
    assert.ok(map.lookup({ apiVersion: 'metrics.k8s.io/v1beta1', kind: 'PodMetrics' }))
    assert.ok(map.lookup({ apiVersion: 'apps/v1', kind: 'Deployment' }))
    assert.equal(map.groupVersion('metrics.k8s.io/v1beta1')?.freshness, 'Stale')
    assert.match(map.groupVersion('metrics.k8s.io/v1beta1')?.staleReason ?? '', /503/)
    assert.equal(errors.length, 1)
    assert.equal(errors[0]?.[0], 'metrics.k8s.io/v1beta1')
    assert.ok(errors[0][1] instanceof ApiError)
  })

  it('says a group-version is unavailable when it never had data', async () => {
    const server = new FakeServer([CORE, APPS, METRICS])
    server.mode = 'legacy'
    server.failures.set('/apis/metrics.k8s.io/v1beta1', unavailable('/apis/metrics.k8s.io/v1beta1'))
    const { discovery } = makeDiscovery(server)
    const map = await discovery.refresh()
    assert.ok(map.lookup({ apiVersion: 'apps/v1', kind: 'Deployment' }))
    await assert.rejects(
      discovery.resolve({ apiVersion: 'metrics.k8s.io/v1beta1', kind: 'PodMetrics' }),
      (error: unknown) =>
        error instanceof UnknownResourceError &&
        /metrics\.k8s\.io\/v1beta1 is unavailable: .*503/.test(error.message)
    )
  })

  it('drops a legacy group-version that is gone (404) without reporting it', async () => {
    const server = new FakeServer([CORE, APPS])
    server.mode = 'legacy'
    server.failures.set(
      '/apis/apps/v1',
      new NotFoundError('GET /apis/apps/v1: 404', {
        statusCode: 404,
        reason: 'NotFound',
        request: { method: 'GET', path: '/apis/apps/v1' },
      })
    )
    const { discovery, errors } = makeDiscovery(server)
    const map = await discovery.refresh()
    assert.equal(map.group('apps'), undefined)
    assert.deepEqual(errors, [])
  })

  it('rejects and keeps the previous snapshot when /apis is not a discovery document', async () => {
    const server = new FakeServer([CORE, APPS])
    const { discovery } = makeDiscovery(server)
    const first = await discovery.refresh()
    server.failures.set('/apis', unavailable('/apis'))
    await assert.rejects(discovery.refresh(), /503/)
    assert.equal(discovery.current(), first)
    server.failures.clear()
    const odd: DiscoveryTransport = {
      requestJson: <T>(): Promise<T> => Promise.resolve({ kind: 'Status' } as T),
    }
    await assert.rejects(
      new Discovery(odd).refresh(),
      /GET \/api: expected an APIGroupDiscoveryList or APIVersions, got kind "Status"/
    )
  })
})

describe('Discovery.resolve', () => {
  it('answers from the snapshot without a request', async () => {
    const server = new FakeServer([CORE, APPS])
    const { discovery } = makeDiscovery(server)
    await discovery.refresh()
    const before = server.requests.length
    const info = await discovery.resolve({ apiVersion: 'apps/v1', kind: 'Deployment' })
    assert.equal(info.ref.resource, 'deployments')
    assert.equal((await discovery.resolveResource('v1', 'pods/status')).subresource, 'status')
    assert.equal(server.requests.length, before)
  })

  it('refreshes once for concurrent misses and finds a CRD that appeared', async () => {
    const server = new FakeServer([CORE, APPS])
    const { discovery } = makeDiscovery(server)
    await discovery.refresh()
    server.groups = [CORE, APPS, WIDGETS]
    const apiVersion = `${WIDGETS_GROUP}/v1`
    const results = await Promise.all([
      discovery.resolve({ apiVersion, kind: 'Widget' }),
      discovery.resolve({ apiVersion, kind: 'Widget' }),
      discovery.resolveResource(apiVersion, 'widgets'),
      discovery.resolveResource(apiVersion, 'widgets/status'),
    ])
    assert.deepEqual(
      results.map((info) => info.ref.resource),
      ['widgets', 'widgets', 'widgets', 'widgets']
    )
    assert.equal(server.count('/apis'), 2, 'one initial refresh and one shared on-demand refresh')
  })

  it('waits for a refresh that started after the miss, not one already in flight', async () => {
    const server = new FakeServer([CORE, APPS])
    const { discovery } = makeDiscovery(server)
    let release = (): void => undefined
    server.gate = new Promise((resolve) => {
      release = resolve
    })
    // The first refresh is on the wire (its answers fixed) when the CRD appears...
    const early = discovery.refresh()
    assert.equal(server.count('/apis'), 1)
    server.groups = [CORE, APPS, WIDGETS]
    const miss = discovery.resolve({ apiVersion: `${WIDGETS_GROUP}/v1`, kind: 'Widget' })
    release()
    server.gate = undefined
    const earlyMap = await early
    assert.equal(earlyMap.lookup({ apiVersion: `${WIDGETS_GROUP}/v1`, kind: 'Widget' }), undefined)
    // ...so the miss must be answered by the next refresh, which sees it.
    assert.equal((await miss).ref.resource, 'widgets')
    assert.equal(server.count('/apis'), 2)
  })

  it('throws UnknownResourceError naming the kind and the likely cause', async () => {
    const server = new FakeServer([CORE, APPS, WIDGETS])
    const { discovery } = makeDiscovery(server)
    await assert.rejects(
      discovery.resolve({ apiVersion: `${WIDGETS_GROUP}/v1`, kind: 'Gadget' }),
      (error: unknown) => {
        assert.ok(error instanceof UnknownResourceError)
        assert.equal(error.name, 'UnknownResourceError')
        assert.equal(error.kind, 'Gadget')
        assert.equal(error.apiVersion, `${WIDGETS_GROUP}/v1`)
        assert.match(
          error.message,
          /kind "Gadget" in apiVersion "example\.metacontroller-ts\.dev\/v1"/
        )
        assert.match(
          error.message,
          /CustomResourceDefinition may not be installed or not yet Established/
        )
        assert.match(error.message, /serves kinds Widget/)
        return true
      }
    )
    await assert.rejects(
      discovery.resolve({ apiVersion: 'nope.example.com/v1', kind: 'Thing' }),
      /serves no API group "nope\.example\.com"/
    )
    await assert.rejects(
      discovery.resolveResource('apps/v2', 'deployments'),
      (error: unknown) =>
        error instanceof UnknownResourceError &&
        error.resource === 'deployments' &&
        error.message.includes('group "apps" serves version(s) v1, not v2')
    )
  })

  it('does not refresh for a malformed apiVersion', async () => {
    const server = new FakeServer([CORE])
    const { discovery } = makeDiscovery(server)
    await assert.rejects(discovery.resolve({ apiVersion: 'a/b/c', kind: 'X' }), /malformed/)
    assert.equal(server.requests.length, 0)
  })

  it('rate-limits refreshes caused by misses', async () => {
    const server = new FakeServer([CORE, APPS])
    const { discovery } = makeDiscovery(server, { onDemandMinIntervalMs: 150 })
    await discovery.refresh()
    const started = performance.now()
    for (let i = 0; i < 3; i++) {
      await assert.rejects(
        discovery.resolve({ apiVersion: 'apps/v1', kind: `Unknown${i}` }),
        UnknownResourceError
      )
    }
    const elapsed = performance.now() - started
    // Three misses in a row: each waits for its own refresh, at most one per 150 ms.
    assert.equal(server.count('/apis'), 4)
    assert.ok(elapsed >= 3 * 150 - 20, `took ${elapsed} ms`)
    // Concurrent misses in one window still share a single refresh.
    await Promise.all(
      ['A', 'B', 'C'].map((kind) =>
        assert.rejects(discovery.resolve({ apiVersion: 'apps/v1', kind }), UnknownResourceError)
      )
    )
    assert.equal(server.count('/apis'), 5)
  })

  it('lets a caller stop waiting without cancelling the shared refresh', async () => {
    const server = new FakeServer([CORE, APPS])
    const { discovery } = makeDiscovery(server, { onDemandMinIntervalMs: 10_000 })
    await discovery.refresh()
    const controller = new AbortController()
    const waiting = discovery.resolve({ apiVersion: 'apps/v1', kind: 'Nope' }, controller.signal)
    controller.abort(new Error('caller gave up'))
    await assert.rejects(waiting, /caller gave up/)
    // The waiting on-demand refresh is still pending; stop() cancels it.
    discovery.stop()
  })
})

describe('Discovery.onChange', () => {
  it('notifies on a new or removed CRD only, and can unsubscribe', async () => {
    const server = new FakeServer([CORE, APPS])
    const { discovery, errors } = makeDiscovery(server)
    const seen: [ResourceMap, ResourceMap][] = []
    const unsubscribe = discovery.onChange((next, previous) => seen.push([next, previous]))
    discovery.onChange(() => {
      throw new Error('listener bug')
    })
    const first = await discovery.refresh()
    assert.equal(seen.length, 1)
    await discovery.refresh()
    assert.equal(seen.length, 1, 'an identical refresh is not a change')
    server.groups = [CORE, APPS, WIDGETS]
    const second = await discovery.refresh()
    assert.equal(seen.length, 2)
    assert.equal(seen[1]?.[0], second)
    assert.ok(seen[1][1].hasSameResources(first))
    assert.equal(
      seen[1][1].lookup({ apiVersion: `${WIDGETS_GROUP}/v1`, kind: 'Widget' }),
      undefined
    )
    assert.ok(seen[1][0].lookup({ apiVersion: `${WIDGETS_GROUP}/v1`, kind: 'Widget' }))
    unsubscribe()
    server.groups = [CORE, APPS]
    await discovery.refresh()
    assert.equal(seen.length, 2)
    assert.equal(errors.length, 3)
    assert.ok(errors.every(([gv, error]) => gv === '' && String(error).includes('listener bug')))
  })
})

describe('Discovery start and stop', () => {
  it('refreshes periodically, reports failures, and stops', async () => {
    const server = new FakeServer([CORE, APPS])
    const { discovery, errors } = makeDiscovery(server, { refreshIntervalMs: 20 })
    discovery.start()
    discovery.start()
    await until(() => server.count('/apis') >= 3)
    server.failures.set('/apis', unavailable('/apis'))
    await until(() => errors.length >= 2)
    assert.ok(errors.every(([gv, error]) => gv === '' && error instanceof ApiError))
    server.failures.clear()
    const failing = server.count('/apis')
    await until(() => server.count('/apis') >= failing + 2)
    assert.ok(discovery.current().lookup({ apiVersion: 'apps/v1', kind: 'Deployment' }))
    discovery.stop()
    const stopped = server.count('/apis')
    await new Promise((resolve) => setTimeout(resolve, 60))
    assert.equal(server.count('/apis'), stopped, 'no refresh after stop()')
  })

  it('does not refresh at once after a recent refresh', async () => {
    const server = new FakeServer([CORE])
    const { discovery } = makeDiscovery(server, { refreshIntervalMs: 60_000 })
    await discovery.refresh()
    discovery.start()
    await new Promise((resolve) => setTimeout(resolve, 20))
    assert.equal(server.count('/apis'), 1)
    discovery.stop()
  })

  it('never applies a refresh that stop() cancelled mid-flight', async () => {
    const server = new FakeServer([CORE])
    const { discovery } = makeDiscovery(server)
    let release = (): void => undefined
    server.gate = new Promise((resolve) => {
      release = resolve
    })
    const inflight = discovery.refresh()
    discovery.stop()
    release()
    await assert.rejects(inflight, { name: 'AbortError' })
    assert.equal(discovery.current().resources().length, 0)
  })

  it('cancels a refresh waiting for the rate limit on stop', async () => {
    const server = new FakeServer([CORE])
    const { discovery } = makeDiscovery(server, { onDemandMinIntervalMs: 10_000 })
    await discovery.refresh()
    const miss = discovery.resolve({ apiVersion: 'v1', kind: 'Nope' })
    discovery.stop()
    // Usable at once after stop: this refresh does not join the cancelled one.
    const after = discovery.refresh()
    await assert.rejects(miss, { name: 'AbortError' })
    assert.ok((await after).lookup({ apiVersion: 'v1', kind: 'Pod' }))
  })
})
