// Proves the Kubernetes client layer against the real API server: pooled connections, plain JSON
// in and out, pagination, every patch type, delete preconditions, the status subresource, typed
// errors with the server's causes, and 429 Retry-After handling through priority and fairness.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { getEventListeners } from 'node:events'
import { after, before, describe, it } from 'node:test'
import type { KubeObject } from '../../src/core/kube-object.js'
import {
  AlreadyExistsError,
  ConflictError,
  InvalidError,
  NotFoundError,
  TooManyRequestsError,
} from '../../src/kube/api-error.js'
import { DynamicClient } from '../../src/kube/dynamic-client.js'
import type { ResourceRef } from '../../src/kube/dynamic-client.js'
import { KubeTransport } from '../../src/kube/kube-transport.js'
import { loadClusterConfig } from '../../src/kube/load-cluster-config.js'
import {
  startControlPlane,
  UNPRIVILEGED_CONTEXT,
  UNPRIVILEGED_USER,
  waitFor,
} from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { timersLeftBy } from '../support/live-timers.js'
import { CONFIGMAPS, NAMESPACES } from '../../src/kube/well-known-resources.js'

const WIDGETS: ResourceRef = {
  group: 'test.metacontroller-ts.dev',
  version: 'v1',
  resource: 'widgets',
  namespaced: true,
}
const FLOW_SCHEMAS: ResourceRef = {
  group: 'flowcontrol.apiserver.k8s.io',
  version: 'v1',
  resource: 'flowschemas',
  namespaced: false,
}
const CLUSTER_ROLE_BINDINGS: ResourceRef = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  resource: 'clusterrolebindings',
  namespaced: false,
}
const PRIORITY_LEVELS: ResourceRef = {
  group: 'flowcontrol.apiserver.k8s.io',
  version: 'v1',
  resource: 'prioritylevelconfigurations',
  namespaced: false,
}

function configMap(name: string, namespace: string, data: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data }
}

describe('kube client against the API server', () => {
  let plane: ControlPlane
  let namespace: string

  before(async () => {
    plane = await startControlPlane({ crds: ['test/fixtures/crds/widgets.yaml'] })
    namespace = `kube-client-${randomBytes(3).toString('hex')}`
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    })
  })

  after(async () => {
    await plane.client.delete(NAMESPACES, namespace).catch(() => undefined)
    await plane.stop()
  })

  it('uses at most 2 TCP connections for 200 sequential requests', async () => {
    const transport = new KubeTransport(plane.config)
    const client = new DynamicClient(transport)
    try {
      for (let i = 0; i < 200; i++) await client.get(NAMESPACES, namespace)
      assert.ok(transport.connectionsOpened >= 1)
      assert.ok(
        transport.connectionsOpened <= 2,
        `opened ${transport.connectionsOpened} connections`
      )
    } finally {
      await transport.close()
    }
  })

  it("lets go of each request's deadline once its response is read, success or error", async () => {
    const client = new DynamicClient(new KubeTransport(plane.config))
    const caller = new AbortController()
    const left = await timersLeftBy(async () => {
      for (let i = 0; i < 20; i++) {
        await client.get(NAMESPACES, namespace, { signal: caller.signal })
        await assert.rejects(
          client.get(NAMESPACES, `missing-${namespace}`, { signal: caller.signal }),
          NotFoundError
        )
      }
    })
    // 40 requests: a deadline kept per request would leave 40 (undici's own timer wheel is one).
    assert.ok(left <= 3, `${left} timers outlive their requests`)
    assert.equal(getEventListeners(caller.signal, 'abort').length, 0)
  })

  it('returns objects as the server sent them: string timestamps, no field dropped', async () => {
    const created = await plane.client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'plain', namespace, annotations: { 'example.com/x': 'y' } },
      data: { a: '1' },
      binaryData: { b: Buffer.from('bytes').toString('base64') },
      immutable: true,
    })
    assert.equal(typeof created.metadata.creationTimestamp, 'string')
    assert.equal(created['immutable'], true)
    assert.deepEqual(created['binaryData'], { b: 'Ynl0ZXM=' })
    const read = await plane.client.get(CONFIGMAPS, 'plain', { namespace })
    assert.deepEqual(read, created)
  })

  it('lists every object across pages', async () => {
    for (let i = 0; i < 12; i++)
      await plane.client.create(CONFIGMAPS, configMap(`page-${i}`, namespace))
    const first = await plane.client.listPage(CONFIGMAPS, { namespace, limit: 5 })
    assert.equal(first.items.length, 5)
    assert.ok(first.metadata.continue)
    // The server omits kind and apiVersion in list items; the client fills them in.
    assert.ok(first.items.every((cm) => cm.kind === 'ConfigMap' && cm.apiVersion === 'v1'))
    const all = await plane.client.list(CONFIGMAPS, { namespace, pageSize: 5 })
    const names = all.items.map((cm) => cm.metadata.name).filter((n) => n?.startsWith('page-'))
    assert.equal(names.length, 12)
  })

  it('applies merge, JSON and server-side apply patches', async () => {
    await plane.client.create(CONFIGMAPS, configMap('patched', namespace, { a: '1' }))
    await plane.client.patch(
      CONFIGMAPS,
      'patched',
      { data: { b: '2' } },
      { namespace, type: 'merge' }
    )
    await plane.client.patch(CONFIGMAPS, 'patched', [{ op: 'add', path: '/data/c', value: '3' }], {
      namespace,
      type: 'json',
    })
    const applied = await plane.client.patch(
      CONFIGMAPS,
      'patched',
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'patched', namespace },
        data: { d: '4' },
      },
      { namespace, type: 'apply', fieldManager: 'metactl-test' }
    )
    assert.deepEqual(applied['data'], { a: '1', b: '2', c: '3', d: '4' })
    const managers = (applied.metadata['managedFields'] as { manager: string }[]).map(
      (m) => m.manager
    )
    assert.ok(managers.includes('metactl-test'))
    // Another manager applying the same field conflicts unless it forces.
    await assert.rejects(
      plane.client.patch(
        CONFIGMAPS,
        'patched',
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'patched', namespace },
          data: { d: 'x' },
        },
        { namespace, type: 'apply', fieldManager: 'other-manager' }
      ),
      ConflictError
    )
    const forced = await plane.client.patch(
      CONFIGMAPS,
      'patched',
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'patched', namespace },
        data: { d: 'x' },
      },
      { namespace, type: 'apply', fieldManager: 'other-manager', force: true }
    )
    assert.equal((forced['data'] as Record<string, string>)['d'], 'x')
  })

  it('raises typed errors: not found, already exists, conflict, invalid with causes', async () => {
    await assert.rejects(plane.client.get(CONFIGMAPS, 'missing', { namespace }), NotFoundError)
    await plane.client.create(CONFIGMAPS, configMap('dup', namespace))
    await assert.rejects(
      plane.client.create(CONFIGMAPS, configMap('dup', namespace)),
      AlreadyExistsError
    )
    const current = await plane.client.get(CONFIGMAPS, 'dup', { namespace })
    await plane.client.update(CONFIGMAPS, { ...current, data: { v: '1' } })
    await assert.rejects(
      plane.client.update(CONFIGMAPS, { ...current, data: { v: '2' } }),
      ConflictError
    )
    await assert.rejects(
      plane.client.create(WIDGETS, {
        apiVersion: 'test.metacontroller-ts.dev/v1',
        kind: 'Widget',
        metadata: { name: 'bad', namespace },
        spec: { size: -1 },
      }),
      (error: unknown) => {
        assert.ok(error instanceof InvalidError)
        assert.equal(error.statusCode, 422)
        assert.ok(
          error.causes.some((c) => c.field === 'spec.size'),
          JSON.stringify(error.causes)
        )
        return true
      }
    )
  })

  it('deletes only when the precondition holds', async () => {
    const cm = await plane.client.create(CONFIGMAPS, configMap('guarded', namespace))
    await assert.rejects(
      plane.client.delete(CONFIGMAPS, 'guarded', {
        namespace,
        preconditions: { uid: 'not-the-uid' },
      }),
      ConflictError
    )
    await plane.client.delete(CONFIGMAPS, 'guarded', {
      namespace,
      preconditions: { uid: cm.metadata.uid ?? '' },
      propagationPolicy: 'Background',
    })
    await assert.rejects(plane.client.get(CONFIGMAPS, 'guarded', { namespace }), NotFoundError)
  })

  it('writes status only through the status subresource', async () => {
    const widget = await plane.client.create(WIDGETS, {
      apiVersion: 'test.metacontroller-ts.dev/v1',
      kind: 'Widget',
      metadata: { name: 'status', namespace },
      spec: { size: 1 },
    })
    const ignored = await plane.client.update(WIDGETS, { ...widget, status: { phase: 'main' } })
    assert.equal(ignored['status'], undefined)
    const updated = await plane.client.updateStatus(WIDGETS, {
      ...ignored,
      status: { phase: 'ok' },
    })
    assert.deepEqual(updated['status'], { phase: 'ok' })
    assert.deepEqual(updated['spec'], { size: 1 })
  })

  it('retries a 429 from priority and fairness after its Retry-After', async (t) => {
    // A priority level with no seats that rejects at once, for the harness's unprivileged user:
    // each of its requests gets a real 429 from the API server until the FlowSchema is deleted.
    // (Impersonation does not work here: APF classifies by the authenticated admin, who is exempt.)
    const userConfig = await loadClusterConfig({
      kubeconfig: plane.kubeconfigPath,
      context: UNPRIVILEGED_CONTEXT,
    }).catch(() => undefined)
    if (userConfig === undefined) {
      t.skip(`the kubeconfig has no ${UNPRIVILEGED_CONTEXT} context (not a metactl control plane)`)
      return
    }
    const suffix = randomBytes(3).toString('hex')
    const level = `metactl-reject-${suffix}`
    await plane.client.create(CLUSTER_ROLE_BINDINGS, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: level },
      // cluster-admin, not view: view is an aggregated role and no aggregation controller runs here.
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'cluster-admin',
      },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: UNPRIVILEGED_USER }],
    })
    await plane.client.create(PRIORITY_LEVELS, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: level },
      spec: {
        type: 'Limited',
        limited: {
          nominalConcurrencyShares: 0,
          lendablePercent: 0,
          borrowingLimitPercent: 0,
          limitResponse: { type: 'Reject' },
        },
      },
    })
    await plane.client.create(FLOW_SCHEMAS, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: level },
      spec: {
        priorityLevelConfiguration: { name: level },
        matchingPrecedence: 100,
        rules: [
          {
            subjects: [{ kind: 'User', user: { name: UNPRIVILEGED_USER } }],
            resourceRules: [
              {
                verbs: ['*'],
                apiGroups: ['*'],
                resources: ['*'],
                namespaces: ['*'],
                clusterScope: true,
              },
            ],
          },
        ],
      },
    })
    // The level still gets one seat, so a burst of concurrent requests is what overflows it.
    const burst = (client: DynamicClient, size: number): Promise<unknown[]> =>
      Promise.all(
        Array.from({ length: size }, () =>
          client.listPage(CONFIGMAPS, { namespace, limit: 1 }).catch((error: unknown) => error)
        )
      )
    const once = new KubeTransport(userConfig, { maxRetries: 0 })
    try {
      // Prove the server itself rejects (APF applies a new FlowSchema within a second or two).
      const rejected = await waitFor(
        async () =>
          (await burst(new DynamicClient(once), 40)).find(
            (r): r is TooManyRequestsError => r instanceof TooManyRequestsError
          ),
        { timeoutMs: 20_000, description: 'priority and fairness to reject a burst with 429' }
      )
      assert.ok((rejected.retryAfterMs ?? 0) >= 1000, `Retry-After: ${rejected.retryAfterMs}`)

      // With retries on, every request of a burst succeeds; the 429s are retried no sooner than
      // their Retry-After, so the burst takes at least that long.
      const statuses: (number | undefined)[] = []
      const retrying = new KubeTransport(userConfig, {
        observer: { onRequest: (info) => statuses.push(info.statusCode) },
      })
      try {
        const started = Date.now()
        const results = await waitFor(
          async () => {
            statuses.length = 0
            const out = await burst(new DynamicClient(retrying), 10)
            return statuses.includes(429) ? out : undefined
          },
          { timeoutMs: 30_000, description: 'a burst that meets a 429' }
        )
        const elapsedMs = Date.now() - started
        assert.deepEqual(
          results.filter((r) => r instanceof Error),
          [],
          'every request succeeded after retrying'
        )
        assert.ok(statuses.filter((s) => s === 429).length >= 1)
        assert.ok(elapsedMs >= (rejected.retryAfterMs ?? 1000) - 50, `burst took ${elapsedMs} ms`)
      } finally {
        await retrying.close()
      }
    } finally {
      await once.close()
      await plane.client.delete(FLOW_SCHEMAS, level).catch(() => undefined)
      await plane.client.delete(PRIORITY_LEVELS, level).catch(() => undefined)
      await plane.client.delete(CLUSTER_ROLE_BINDINGS, level).catch(() => undefined)
    }
  })
})
