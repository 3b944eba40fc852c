import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KubeObject } from '../../core/kube-object.js'
import type { Logger, LogFields } from '../../runtime/diagnostics/logger.js'
import { Registry } from '../../runtime/metrics/prom-client-core.js'
import { forbiddenCaches, notReadyCaches } from './cache-readiness.js'
import { FORBIDDEN_FRESH_MS, ForbiddenRequests } from './forbidden-requests.js'
import { describeRight, rightOfRequest } from './forbidden-right.js'

describe('rightOfRequest', () => {
  it('reads verb, group, resource, subresource and namespace back from a request', () => {
    assert.deepEqual(rightOfRequest('GET', '/api/v1/pods?limit=500'), {
      verb: 'list',
      group: '',
      version: 'v1',
      resource: 'pods',
      namespace: undefined,
    })
    assert.equal(rightOfRequest('GET', '/api/v1/pods?watch=true&resourceVersion=5')?.verb, 'watch')
    assert.equal(rightOfRequest('GET', '/api/v1/namespaces/a/pods/p')?.verb, 'get')
    assert.deepEqual(rightOfRequest('PUT', '/apis/example.com/v1/namespaces/ns/webs/w/status'), {
      verb: 'update',
      group: 'example.com',
      version: 'v1',
      resource: 'webs/status',
      namespace: 'ns',
    })
    assert.equal(rightOfRequest('POST', '/apis/apps/v1/namespaces/ns/deployments')?.verb, 'create')
    assert.equal(rightOfRequest('PATCH', '/apis/apps/v1/namespaces/n/deployments/d')?.verb, 'patch')
    assert.equal(rightOfRequest('DELETE', '/api/v1/namespaces/n/configmaps/c')?.verb, 'delete')
  })

  it('takes namespaces and namespaces/<name> as the cluster-scoped Namespace resource', () => {
    assert.deepEqual(rightOfRequest('GET', '/api/v1/namespaces'), {
      verb: 'list',
      group: '',
      version: 'v1',
      resource: 'namespaces',
      namespace: undefined,
    })
    assert.equal(rightOfRequest('GET', '/api/v1/namespaces/kube-system')?.resource, 'namespaces')
  })

  it('names no right for discovery and other non-resource paths', () => {
    for (const path of ['/api', '/api/v1', '/apis/apps/v1', '/version', '/healthz'])
      assert.equal(rightOfRequest('GET', path), undefined, path)
  })

  it('describes a right as a person would grant it', () => {
    const right = rightOfRequest('PUT', '/apis/example.com/v1/namespaces/ns/webs/w/status')
    assert.ok(right)
    assert.equal(describeRight(right), 'update webs/status.example.com in namespace ns')
    const list = rightOfRequest('GET', '/api/v1/pods')
    assert.ok(list)
    assert.equal(describeRight(list), 'list pods cluster-wide')
  })
})

function controller(name: string, child: string): KubeObject {
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name },
    spec: {
      parentResource: { apiVersion: 'example.com/v1', resource: `${name}s` },
      childResources: [{ apiVersion: 'v1', resource: child }],
      hooks: { sync: { webhook: { url: 'http://hook/sync' } } },
    },
  }
}

function recorder() {
  const lines: { message: string; fields: LogFields | undefined }[] = []
  const events: { name: string; reason: string; message: string }[] = []
  const log = {
    warn: (message: string, fields?: LogFields) => lines.push({ message, fields }),
  } as unknown as Logger
  const sink = {
    record: (object: KubeObject, _type: string, reason: string, message: string) => {
      events.push({ name: object.metadata.name ?? '', reason, message })
    },
  }
  return { lines, events, log, sink }
}

describe('ForbiddenRequests', () => {
  const controllers = [controller('web', 'pods'), controller('db', 'secrets')]

  it('names each controller needing the right in one event, one log line and the counter', async () => {
    const { lines, events, log, sink } = recorder()
    const registry = new Registry()
    let now = 0
    const forbidden = new ForbiddenRequests({ log, registry, now: () => now })
    forbidden.bind({ events: sink, controllers: () => controllers })
    for (let retry = 0; retry < 5; retry++) {
      forbidden.onRequest({ method: 'GET', path: '/api/v1/pods?limit=500', statusCode: 403 })
      now += 30_000
    }
    forbidden.onRequest({ method: 'GET', path: '/api/v1/pods', statusCode: 200 })
    assert.deepEqual(events, [
      {
        name: 'web',
        reason: 'Forbidden',
        message:
          'The engine may not list pods cluster-wide: controller web needs it (metactl rbac prints its ClusterRole)',
      },
    ])
    assert.deepEqual(
      lines.map((l) => [l.message, l.fields?.['controller'], l.fields?.['right']]),
      [['request forbidden', 'web', 'list pods cluster-wide']],
      'one log line, not one per retry'
    )
    const text = await registry.metrics()
    assert.match(
      text,
      /metacontroller_forbidden_requests_total\{controller="web",verb="list",group="",resource="pods"\} 5/
    )
  })

  it('reports again once the window has passed', () => {
    const { events, log, sink } = recorder()
    let now = 0
    const forbidden = new ForbiddenRequests({ log, now: () => now, repeatAfterMs: 1000 })
    forbidden.bind({ events: sink, controllers: () => controllers })
    const request = { method: 'POST', path: '/api/v1/namespaces/a/secrets', statusCode: 403 }
    forbidden.onRequest(request)
    now = 500
    forbidden.onRequest(request)
    now = 1500
    forbidden.onRequest(request)
    assert.deepEqual(
      events.map((e) => e.name),
      ['db', 'db']
    )
  })

  it('logs a right no controller needs once, with no event', () => {
    const { lines, events, log, sink } = recorder()
    const forbidden = new ForbiddenRequests({ log })
    forbidden.bind({ events: sink, controllers: () => controllers })
    forbidden.onRequest({ method: 'GET', path: '/api/v1/nodes', statusCode: 403 })
    forbidden.onRequest({ method: 'GET', path: '/api/v1/nodes', statusCode: 403 })
    assert.equal(events.length, 0)
    assert.equal(lines.length, 1)
    assert.equal(lines[0]?.fields?.['controller'], '')
  })

  it('keeps a forbidden list out of readiness while it is fresh, but never the engine own', () => {
    const { log, sink } = recorder()
    let now = 0
    const forbidden = new ForbiddenRequests({ log, now: () => now })
    forbidden.bind({ events: sink, controllers: () => controllers })
    forbidden.onRequest({ method: 'GET', path: '/api/v1/pods', statusCode: 403 })
    const path = '/apis/metacontroller.k8s.io/v1alpha1/compositecontrollers'
    forbidden.onRequest({ method: 'GET', path, statusCode: 403 })
    const caches = [
      { description: 'pods.v1', synced: false },
      { description: 'compositecontrollers.v1alpha1.metacontroller.k8s.io', synced: false },
      { description: 'webs.v1.example.com', synced: true },
    ]
    assert.deepEqual(notReadyCaches(caches, forbidden.forbiddenCollections()), [
      'compositecontrollers.v1alpha1.metacontroller.k8s.io not synced',
    ])
    assert.deepEqual(forbiddenCaches(caches, forbidden.forbiddenCollections()), [
      'pods.v1 not synced: forbidden to list pods cluster-wide (needed by web)',
    ])
    now = FORBIDDEN_FRESH_MS + 1
    assert.equal(notReadyCaches(caches, forbidden.forbiddenCollections()).length, 2)
  })
})
