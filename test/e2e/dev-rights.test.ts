// `metactl dev` warns when the engine would lack a right a controller needs (issue 35), on a
// scaffolded project whose deploy/ binds the engine's ServiceAccount (as deploy/manifests does):
// - the ServiceAccount is not in the cluster: deploy/'s RBAC is read; complete, dev says nothing;
//   deploy/rbac.yaml without the status rule, dev names that one right and the fix;
// - the ServiceAccount is in the cluster: the API server is asked (SubjectAccessReview); bound to
//   a ClusterRole with every rule, dev says nothing; to one lacking a right, dev names it.
// dev itself runs with the test's admin credentials throughout, which would hide the gap. Then
// the real engine (`metactl run`) runs as that ServiceAccount, and its own message for the request
// the API server forbids (issue 35: a Warning event on the controller) names the same right.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { parseAllDocuments, stringify } from 'yaml'
import { serveHooks } from 'metacontroller-ts'
import { NAMESPACES } from 'metacontroller-ts/kube'
import type { ResourceRef } from 'metacontroller-ts/kube'
import { startControlPlane, waitFor } from 'metacontroller-ts/testing'
import type { ControlPlane } from 'metacontroller-ts/testing'
import type { KubeObject } from '../../src/core/kube-object.js'
import { linkProjectModules, startDev } from '../support/dev-process.js'
import type { DevProcess } from '../support/dev-process.js'
import { metactl } from '../support/run-metactl.js'
import { spawnEngine } from '../support/spawned-engine.js'

const rbac = (resource: string, namespaced = false): ResourceRef => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  resource,
  namespaced,
})
const CLUSTER_ROLES = rbac('clusterroles')
const CLUSTER_ROLE_BINDINGS = rbac('clusterrolebindings')
const COMPOSITES: ResourceRef = {
  group: 'metacontroller.k8s.io',
  version: 'v1alpha1',
  resource: 'compositecontrollers',
  namespaced: false,
}
const GRANTS: ResourceRef = {
  group: 'rights.example.com',
  version: 'v1',
  resource: 'grants',
  namespaced: true,
}
const EVENTS: ResourceRef = { group: '', version: 'v1', resource: 'events', namespaced: true }
const SERVICE_ACCOUNTS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'serviceaccounts',
  namespaced: true,
}

describe('metactl dev warns of a right the engine lacks', { timeout: 240_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-dev-rights-'))
  const project = join(work, 'grant-controller')
  const rbacFile = join(project, 'deploy', 'rbac.yaml')
  // The engine's ServiceAccount deploy/ binds: a namespace of this test's own.
  const namespace = `dev-rights-${Date.now().toString(36)}`
  const inClusterRole = `${namespace}:grants`
  let complete = ''
  let plane: ControlPlane
  let dev: DevProcess

  const warnings = (from: number, to?: number): string[] =>
    dev
      .output()
      .slice(from, to)
      .split('\n')
      .flatMap((l) => /^\d\d:\d\d:\d\d (warning: .*)$/.exec(l)?.[1] ?? [])

  /** Saves deploy/rbac.yaml and returns where the output of the reload it causes starts. */
  const saveRbac = async (text: string): Promise<number> => {
    const from = dev.output().length
    writeFileSync(rbacFile, text)
    await dev.line(/^\S+ reloaded the manifests \(deploy\/rbac\.yaml changed\)/, 'the reload', from)
    return from
  }

  /**
   * The output of the rights check that follows a manifest reload: a hook reload queued after it
   * prints only once the check is done (dev runs reloads one at a time).
   */
  const checkedOutput = async (from: number): Promise<string[]> => {
    const hook = join(project, 'src', 'hook.ts')
    writeFileSync(hook, readFileSync(hook, 'utf8'))
    const marker = await dev.line(/^\S+ reloaded src\/hook\.ts/, 'the hook reload after it', from)
    return warnings(from, dev.output().indexOf(marker, from))
  }

  before(async () => {
    plane = await startControlPlane()
    const init = await metactl([
      'init',
      project,
      '--kind',
      'Grant',
      '--group',
      'rights.example.com',
    ])
    assert.equal(init.code, 0, init.stderr)
    linkProjectModules(project)
    complete = readFileSync(rbacFile, 'utf8')
    // What deploy/manifests does for the engine: an aggregating ClusterRole bound to its account.
    writeFileSync(
      join(project, 'deploy', 'engine.yaml'),
      [
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: `${namespace}:controllers` },
          aggregationRule: {
            clusterRoleSelectors: [
              { matchLabels: { 'metacontroller-ts.dev/aggregate-to-controllers': 'true' } },
            ],
          },
          rules: [],
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: `${namespace}:controllers` },
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'ClusterRole',
            name: `${namespace}:controllers`,
          },
          subjects: [{ kind: 'ServiceAccount', name: 'engine', namespace }],
        },
      ]
        .map((o) => stringify(o))
        .join('---\n')
    )
    dev = startDev(project, ['--kubeconfig', plane.kubeconfigPath])
    await dev.line(/^dev: serving /, 'metactl dev to start')
  })

  after(async () => {
    assert.deepEqual(await dev.stop(), [0, null])
    await plane.client.delete(COMPOSITES, 'grant-controller').catch(() => undefined)
    for (const name of [inClusterRole, `${namespace}:engine`]) {
      await plane.client.delete(CLUSTER_ROLE_BINDINGS, name).catch(() => undefined)
      await plane.client.delete(CLUSTER_ROLES, name).catch(() => undefined)
    }
    await plane.client.delete(NAMESPACES, namespace).catch(() => undefined)
    await plane.stop()
    rmSync(work, { recursive: true, force: true })
  })

  /** The scaffold's role without its status rule. */
  const withoutStatus = (text: string): string =>
    text.replace(
      / {2}- apiGroups: \[rights\.example\.com\]\n {4}resources: \[grants\/status\]\n {4}verbs: \[update\]\n/,
      ''
    )

  it("says nothing when deploy/'s RBAC grants every right (the account is not in the cluster)", () => {
    assert.deepEqual(warnings(0), [])
  })

  it('names the one right deploy/rbac.yaml lacks, and the fix', async () => {
    const lacking = withoutStatus(complete)
    assert.notEqual(lacking, complete, 'the scaffold role has the status rule this test removes')
    const from = await saveRbac(lacking)
    assert.deepEqual(await checkedOutput(from), [
      'warning: CompositeController grant-controller needs update on grants/status in API group ' +
        `rights.example.com, which deploy/ does not grant the engine's ServiceAccount ${namespace}/engine; ` +
        'fix: metactl rbac -f deploy/controller.yaml > deploy/rbac.yaml',
    ])
  })

  describe('the ServiceAccount in the cluster', () => {
    /** Binds the account to a ClusterRole holding the rules of `text` (deploy/rbac.yaml's role). */
    async function grantInCluster(text: string): Promise<void> {
      const role = parseAllDocuments(text)[0]?.toJS() as KubeObject
      const object = { ...role, metadata: { name: inClusterRole } }
      const live = await plane.client.get(CLUSTER_ROLES, inClusterRole).catch(() => undefined)
      if (live === undefined) await plane.client.create(CLUSTER_ROLES, object)
      else await plane.client.update(CLUSTER_ROLES, { ...object, metadata: live.metadata })
    }

    before(async () => {
      await plane.client.create(NAMESPACES, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: namespace },
      })
      await plane.client.create(SERVICE_ACCOUNTS, {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'engine', namespace },
      })
      await grantInCluster(complete)
      await plane.client.create(CLUSTER_ROLE_BINDINGS, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: inClusterRole },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: inClusterRole,
        },
        subjects: [{ kind: 'ServiceAccount', name: 'engine', namespace }],
      })
    })

    it('asks the API server, and says nothing when the account holds every right', async () => {
      // deploy/rbac.yaml still lacks the status rule: the cluster's answer is what counts now.
      const from = await saveRbac(withoutStatus(complete))
      assert.deepEqual(await checkedOutput(from), [])
    })

    it('names the right the account lacks in the cluster, and the fix', async () => {
      await grantInCluster(withoutStatus(complete))
      const from = await saveRbac(complete)
      assert.deepEqual(await checkedOutput(from), [
        'warning: CompositeController grant-controller needs update on grants/status in API group ' +
          `rights.example.com, which the engine's ServiceAccount ${namespace}/engine lacks in this ` +
          'cluster; fix: metactl rbac -f deploy/controller.yaml > deploy/rbac.yaml, then kubectl ' +
          'apply -f deploy/rbac.yaml',
      ])
    })

    /** A kubeconfig holding nothing but a token of the engine's ServiceAccount. */
    async function serviceAccountKubeconfig(): Promise<string> {
      const { status } = await plane.client.transport.requestJson<{ status: { token: string } }>({
        method: 'POST',
        path: `/api/v1/namespaces/${namespace}/serviceaccounts/engine/token`,
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} },
      })
      const { server, caPem } = plane.config
      const ca = caPem === undefined ? {} : { 'certificate-authority-data': btoa(caPem) }
      const file = join(work, 'engine.kubeconfig')
      const kubeconfig = {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server, ...ca } }],
        users: [{ name: 'engine', user: { token: status.token } }],
        contexts: [{ name: 'engine', context: { cluster: 'c', user: 'engine' } }],
        'current-context': 'engine',
      }
      writeFileSync(file, stringify(kubeconfig), { mode: 0o600 })
      return file
    }

    it("gets the engine's own Forbidden event for that right when it runs as the account", async () => {
      // dev syncs the same parents with the user's rights: stopped, so only the engine does.
      assert.deepEqual(await dev.stop(), [0, null])
      // The engine's own rights, as deploy/manifests grants them.
      const engineRules = parseAllDocuments(
        readFileSync('deploy/manifests/rbac-engine.yaml', 'utf8')
      )
        .map((d) => d.toJS() as KubeObject)
        .find((o) => o.kind === 'ClusterRole')?.['rules']
      assert.ok(engineRules, "deploy/manifests/rbac-engine.yaml holds the engine's ClusterRole")
      const engineRole = `${namespace}:engine`
      await plane.client.create(CLUSTER_ROLES, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: engineRole },
        rules: engineRules,
      })
      await plane.client.create(CLUSTER_ROLE_BINDINGS, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: engineRole },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: engineRole },
        subjects: [{ kind: 'ServiceAccount', name: 'engine', namespace }],
      })
      const hooks = await serveHooks(
        { '/sync': () => ({ children: [], status: { ready: true } }) },
        { port: 0, log: () => undefined }
      )
      const engine = spawnEngine(await serviceAccountKubeconfig(), [
        `--target-label-selector=dev-rights=${namespace}`,
      ])
      try {
        const controller = parseAllDocuments(
          readFileSync(join(project, 'deploy', 'controller.yaml'), 'utf8')
        )[0]?.toJS() as KubeObject
        const spec = controller['spec'] as Record<string, unknown>
        await plane.client.create(COMPOSITES, {
          ...controller,
          metadata: { ...controller.metadata, labels: { 'dev-rights': namespace } },
          spec: { ...spec, hooks: { sync: { webhook: { url: `${hooks.url}/sync` } } } },
        })
        await plane.client.create(GRANTS, {
          apiVersion: 'rights.example.com/v1',
          kind: 'Grant',
          metadata: { name: 'by-the-engine', namespace },
          spec: { message: 'hi', replicas: 1 },
        })
        // A cluster-scoped controller's events are in default.
        const event = await waitFor(
          async () =>
            (await plane.client.list(EVENTS, { namespace: 'default' })).items.find(
              (e) =>
                (e['involvedObject'] as { name?: string } | undefined)?.name ===
                  'grant-controller' && e['reason'] === 'Forbidden'
            ),
          { timeoutMs: 60_000, description: "the engine's Forbidden event" }
        )
        assert.equal(event['type'], 'Warning')
        assert.match(
          String(event['message']),
          new RegExp(
            `may not update grants/status\\.rights\\.example\\.com in namespace ${namespace}: controller grant-controller needs it`
          )
        )
      } finally {
        engine.kill()
        await hooks.close()
      }
    })
  })
})
