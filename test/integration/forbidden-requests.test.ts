// One engine, two CompositeControllers, a ServiceAccount holding the engine's role and
// `metactl rbac`'s rules for both but one: the controller whose rules are whole converges, /readyz
// stays 200, and the missing right is named once (a Forbidden event on the other controller, one
// log line, the forbidden-requests counter), on the real control plane's RBAC.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { request } from 'undici'
import { parseAllDocuments } from 'yaml'
import { controllerRbacRules, rbacControllerOf } from '../../src/api/controller-rbac-rules.js'
import type { PolicyRule } from '../../src/api/controller-rbac-rules.js'
import { startOpsServer } from '../../src/cli/commands/ops-server.js'
import type { KubeObject } from '../../src/core/kube-object.js'
import { Engine } from '../../src/engine/engine.js'
import type { ResourceRef } from '../../src/kube/dynamic-client.js'
import { DynamicClient } from '../../src/kube/dynamic-client.js'
import { KubeTransport } from '../../src/kube/kube-transport.js'
import { createLogger } from '../../src/runtime/diagnostics/logger.js'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import {
  CCS,
  EVENTS,
  METACONTROLLER_CRDS,
  NAMESPACES,
  isolatedComposite,
  serveHook,
} from '../support/engine-fixture.js'
import type { ServedHook } from '../support/engine-fixture.js'

const rbac = (resource: string): ResourceRef => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  resource,
  namespaced: false,
})
const SERVICE_ACCOUNTS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'serviceaccounts',
  namespaced: true,
}

const whole = isolatedComposite('ForbidOkParent', 'ForbidOkChild')
const lacking = isolatedComposite('ForbidNoParent', 'ForbidNoChild')

function compositeController(name: string, id: string, spec: unknown): KubeObject {
  return {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name, labels: { 'forbidden-test': id } },
    spec,
  }
}

function rulesOf(object: KubeObject): PolicyRule[] {
  const controller = rbacControllerOf(object)
  assert.ok(controller)
  return controllerRbacRules(controller)
}

describe('a controller lacking a right', () => {
  const id = randomBytes(4).toString('hex')
  const ns = `forbidden-${id}`
  let plane: ControlPlane
  let hook: ServedHook
  let engine: Engine | undefined
  const cleanup: (() => Promise<unknown>)[] = []
  const lines: Record<string, unknown>[] = []

  before(async () => {
    plane = await startControlPlane({ crds: METACONTROLLER_CRDS })
    await plane.installCrds([whole.parentCrd.crd, whole.childCrd.crd])
    await plane.installCrds([lacking.parentCrd.crd, lacking.childCrd.crd])
    hook = await serveHook((body) => {
      const { parent } = body as { parent: KubeObject }
      const name = parent.metadata.name ?? ''
      const child = { apiVersion: whole.childCrd.apiVersion, kind: 'ForbidOkChild' }
      return {
        status: { converged: true },
        children: [{ ...child, metadata: { name, labels: { app: name } } }],
      }
    })
    cleanup.push(() => hook.close())
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    })
    cleanup.push(() => plane.client.delete(NAMESPACES, ns))
  })

  after(async () => {
    await engine?.stop()
    for (const step of cleanup.reverse()) await step().catch(() => undefined)
    await plane.stop()
  })

  /** A client authenticated as a ServiceAccount of `ns` bound to `rules`. */
  async function serviceAccountConfig(rules: PolicyRule[]): Promise<Engine['transport']['config']> {
    await plane.client.create(SERVICE_ACCOUNTS, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'engine', namespace: ns },
    })
    const name = `metacontroller-ts:forbidden-test-${id}`
    await plane.client.create(rbac('clusterroles'), {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name },
      rules,
    })
    cleanup.push(() => plane.client.delete(rbac('clusterroles'), name))
    await plane.client.create(rbac('clusterrolebindings'), {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name: 'engine', namespace: ns }],
    })
    cleanup.push(() => plane.client.delete(rbac('clusterrolebindings'), name))
    const admin = new KubeTransport(plane.config)
    const token = await admin.requestJson<{ status: { token: string } }>({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/serviceaccounts/engine/token`,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} },
    })
    await admin.close()
    // The server and its CA, with the ServiceAccount's token in place of the admin's credentials.
    const server = { ...plane.config }
    delete server.clientCertPem
    delete server.clientKeyPem
    return { ...server, auth: { type: 'token', token: token.status.token } }
  }

  it('lets the other converge, keeps /readyz 200, and names the right once', async () => {
    const okController = compositeController(`ok-${id}`, id, whole.ccSpec(hook.url, ns))
    const noController = compositeController(`no-${id}`, id, lacking.ccSpec(hook.url, ns))
    const [engineRole] = parseAllDocuments(
      readFileSync('deploy/manifests/rbac-engine.yaml', 'utf8')
    )
      .map((d) => d.toJS() as { kind: string; rules?: PolicyRule[] })
      .filter((o) => o.kind === 'ClusterRole')
    // Every computed rule of the second controller but the ones on its child resource.
    const missing = lacking.childCrd.ref.resource
    const rules = [
      ...(engineRole?.rules ?? []),
      ...rulesOf(okController),
      ...rulesOf(noController).filter((r) => !r.resources.includes(missing)),
    ]
    const config = await serviceAccountConfig(rules)
    const asEngine = new DynamicClient(new KubeTransport(config))
    // The RBAC authorizer sees a new binding through its informers, a moment later.
    await waitFor(
      () =>
        asEngine.list(CCS).then(
          () => true,
          () => false
        ),
      {
        timeoutMs: 15_000,
        description: 'the binding to take effect',
      }
    )
    await asEngine.transport.close()

    for (const cc of [okController, noController]) {
      await plane.client.create(CCS, cc)
      cleanup.push(() => plane.client.delete(CCS, cc.metadata.name ?? ''))
    }
    engine = new Engine(config, {
      targetLabelSelector: `forbidden-test=${id}`,
      log: createLogger({
        write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
      }),
    })
    await engine.start()
    await plane.client.create(whole.parentCrd.ref, whole.parentObject('web', ns))

    // The controller whose rules are whole converges.
    await waitFor(
      () =>
        plane.client.get(whole.childCrd.ref, 'web', { namespace: ns }).then(
          () => true,
          () => false
        ),
      { timeoutMs: 30_000, description: 'the child of the whole controller' }
    )
    const running = engine
    // The other's child cache is forbidden: it is not counted, and the verbose answer names it.
    await waitFor(() => running.notReady().length === 0 && running.forbiddenNotReady().length > 0, {
      timeoutMs: 30_000,
      description: 'ready, with the forbidden cache left out',
    })
    const server = await startOpsServer(
      { host: '127.0.0.1', port: 0 },
      { notReady: () => running.notReady(), readyNotes: () => running.forbiddenNotReady() }
    )
    cleanup.push(() => server.close())
    const ready = await request(`http://127.0.0.1:${server.port}/readyz?verbose`)
    const body = await ready.body.text()
    assert.equal(ready.statusCode, 200, body)
    const right = `list ${missing}.${lacking.childCrd.ref.group} cluster-wide`
    assert.ok(body.includes(`forbidden to ${right} (needed by no-${id})`), body)

    // The Warning event on the lacking controller (cluster-scoped: its events are in default).
    const event = await waitFor(
      async () =>
        (await plane.client.list(EVENTS, { namespace: 'default' })).items.find(
          (e) =>
            (e['involvedObject'] as { name?: string } | undefined)?.name === `no-${id}` &&
            e['reason'] === 'Forbidden'
        ),
      { timeoutMs: 30_000, description: 'the Forbidden event' }
    )
    assert.equal(event['type'], 'Warning')
    assert.match(String(event['message']), new RegExp(`may not ${right}: controller no-${id}`))

    const metrics = await running.metrics.registry.metrics()
    const series = new RegExp(
      `metacontroller_forbidden_requests_total\\{controller="no-${id}",verb="list",group="${lacking.childCrd.ref.group}",resource="${missing}"\\} (\\d+)`
    )
    const count = Number(series.exec(metrics)?.[1] ?? 0)
    assert.ok(count >= 2, `the informer retried the list (${count} forbidden requests)`)
    const named = lines.filter(
      (l) => l['msg'] === 'request forbidden' && String(l['right']).startsWith(`list ${missing}`)
    )
    assert.deepEqual(
      named.map((l) => l['controller']),
      [`no-${id}`],
      `one log line for ${count} forbidden requests`
    )
    assert.deepEqual(
      lines.filter((l) => l['msg'] === 'watch failed; retrying'),
      [],
      'no line per retry'
    )
  })
})
