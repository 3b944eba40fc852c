// Proves the artefacts that run the engine on a real cluster (docs/deploy.md):
// - `kubectl kustomize deploy/manifests` (and the PodService example overlay) renders the
//   documented objects, the API server accepts every one of them in a server-side dry run, and
//   the engine's Pod passes the restricted Pod Security Standard;
// - the engine, run with the Deployment's own args and with nothing but a ServiceAccount token
//   holding the shipped engine ClusterRole (plus a controller's role, as a user grants it), starts,
//   becomes ready, records events and syncs a parent: the least-privilege RBAC is sufficient;
// - the Helm chart lints, renders the same engine objects as the kustomize manifests, renders
//   every option, and passes a server-side dry run (skipped, with the reason, when helm is not
//   built; build it with tools/helm/build.sh);
// - the Dockerfile has the two node:24 stages described and copies only paths that exist.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { after, before, describe, it } from 'node:test'
import { request } from 'undici'
import { parse, stringify } from 'yaml'
import type { KubeObject } from '../../src/core/kube-object.js'
import { rbacManifest } from '../../src/cli/rbac/rbac-manifest.js'
import { manifestFiles } from '../../src/cli/init/scaffold-manifests.js'
import { scaffoldNames } from '../../src/cli/init/scaffold-names.js'
import type { ResourceRef } from '../../src/kube/dynamic-client.js'
import {
  CRD_RESOURCE,
  parseManifests,
  startControlPlane,
  waitFor,
} from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import {
  CCS,
  EVENTS,
  METACONTROLLER_CRDS,
  NAMESPACES,
  serveHook,
  testCrd,
} from '../support/engine-fixture.js'
import { CHART, HELM, HELM_SKIP, HELM_VERSION } from '../support/helm-binary.js'

const NAMESPACE = 'metacontroller'
const IMAGE = 'ghcr.io/metacontroller-ts/metacontroller-ts:0.1.0'
const DEPLOYMENT_ARGS = [
  'run',
  '--zap-log-level=info',
  '--discovery-interval=20s',
  '--cache-flush-interval=30m',
  '--metrics-address=:9999',
  '--health-probe-bind-address=:8081',
  '--leader-election',
  '--leader-election-id=metacontroller',
  '--leader-election-lease-duration=15s',
  '--leader-election-renew-deadline=10s',
  '--leader-election-retry-period=2s',
]

interface Result {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

function sh(
  command: string,
  args: readonly string[],
  options: { input?: string; env?: NodeJS.ProcessEnv } = {}
): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: options.env ?? process.env,
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.once('error', reject)
    child.once('close', (code) => {
      resolve({ code: code ?? 1, stdout, stderr })
    })
    child.stdin.end(options.input ?? '')
  })
}

async function ok(command: string, args: readonly string[], input?: string): Promise<string> {
  const result = await sh(command, args, input === undefined ? {} : { input })
  assert.equal(
    result.code,
    0,
    `${command} ${args.join(' ')} failed:\n${result.stderr}${result.stdout}`
  )
  return result.stdout
}

type Container = Record<string, unknown> & { args?: string[]; image?: string }
interface PodSpec {
  containers: Container[]
  [field: string]: unknown
}
interface DeploymentSpec {
  replicas?: number
  strategy?: { type?: string }
  selector: { matchLabels: Record<string, string> }
  template: { metadata: { labels: Record<string, string> }; spec: PodSpec }
}
interface Rule {
  apiGroups: string[]
  resources: string[]
  verbs: string[]
}

function find(objects: readonly KubeObject[], kind: string, name: string): KubeObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name)
  assert.ok(
    found,
    `no ${kind} ${name} in ${objects.map((o) => `${o.kind}/${o.metadata.name ?? ''}`).join(', ')}`
  )
  return found
}

const deploymentSpec = (o: KubeObject): DeploymentSpec => o['spec'] as DeploymentSpec
const rulesOf = (o: KubeObject): Rule[] => o['rules'] as Rule[]
const kindsOf = (objects: readonly KubeObject[]): string[] =>
  objects.map((o) => `${o.kind}/${o.metadata.name ?? ''}`).sort()

describe('deploy manifests', () => {
  let plane: ControlPlane
  let kubeconfig: string
  const work = mkdtempSync(join(tmpdir(), 'deploy-manifests-'))
  let createdNamespace = false

  const kubectl = (args: readonly string[], input?: string): Promise<string> =>
    ok('kubectl', ['--kubeconfig', kubeconfig, ...args], input)

  /** Server-side dry run of every object; returns the lines kubectl printed, one per object. */
  async function dryRun(objects: readonly KubeObject[], yaml: string): Promise<string[]> {
    const out = await kubectl(['apply', '--dry-run=server', '-f', '-'], yaml)
    const lines = out.trim().split('\n')
    assert.equal(lines.length, objects.length, out)
    for (const line of lines) assert.match(line, /\(server dry run\)$/)
    return lines
  }

  before(async () => {
    plane = await startControlPlane({ crds: METACONTROLLER_CRDS })
    kubeconfig = plane.kubeconfigPath
    // Namespaced objects can only be dry-run into a namespace that exists.
    const current = (): Promise<KubeObject | undefined> =>
      plane.client.get(NAMESPACES, NAMESPACE).catch(() => undefined)
    let existing = await current()
    if (existing?.metadata.deletionTimestamp !== undefined) {
      // Left terminating by a previous run: nothing can be created in it until it is gone.
      await waitFor(async () => (await current()) === undefined, {
        timeoutMs: 60_000,
        description: `namespace ${NAMESPACE} to finish terminating`,
      })
      existing = undefined
    }
    if (existing === undefined) {
      await plane.client.create(NAMESPACES, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: NAMESPACE },
      })
      createdNamespace = true
    }
  })

  after(async () => {
    if (createdNamespace) await plane.client.delete(NAMESPACES, NAMESPACE).catch(() => undefined)
    await plane.stop()
    rmSync(work, { recursive: true, force: true })
  })

  describe('kustomize (deploy/manifests)', () => {
    let yaml: string
    let objects: KubeObject[]

    before(async () => {
      yaml = await kubectl(['kustomize', 'deploy/manifests'])
      objects = parseManifests(yaml, 'kubectl kustomize deploy/manifests')
    })

    it('renders the CRDs, namespace, ServiceAccount, RBAC, Deployment and metrics Service', () => {
      assert.deepEqual(kindsOf(objects), [
        'ClusterRole/metacontroller-ts:controllers',
        'ClusterRole/metacontroller-ts:engine',
        'ClusterRoleBinding/metacontroller-ts:controllers',
        'ClusterRoleBinding/metacontroller-ts:engine',
        'CustomResourceDefinition/compositecontrollers.metacontroller.k8s.io',
        'CustomResourceDefinition/controllerrevisions.metacontroller.k8s.io',
        'CustomResourceDefinition/decoratorcontrollers.metacontroller.k8s.io',
        'Deployment/metacontroller',
        'Namespace/metacontroller',
        'PodDisruptionBudget/metacontroller',
        'Role/metacontroller-ts:leader-election',
        'RoleBinding/metacontroller-ts:leader-election',
        'Service/metacontroller-metrics',
        'ServiceAccount/metacontroller',
      ])
      for (const object of objects) {
        assert.equal(object.metadata.labels?.['app.kubernetes.io/name'], 'metacontroller-ts')
        if (
          ['Deployment', 'Service', 'ServiceAccount', 'PodDisruptionBudget', 'Role'].includes(
            object.kind
          )
        )
          assert.equal(object.metadata.namespace, NAMESPACE)
      }
      // The CRDs are deploy/crds unchanged (apart from the common label).
      const crds = parseManifests(
        ['compositecontrollers', 'decoratorcontrollers', 'controllerrevisions']
          .map((name) => readFileSync(`deploy/crds/${name}.yaml`, 'utf8'))
          .join('\n---\n'),
        'deploy/crds'
      )
      for (const crd of crds) {
        const rendered = find(objects, crd.kind, crd.metadata.name ?? '')
        assert.deepEqual(rendered['spec'], crd['spec'])
      }
    })

    it('runs two engines with leader election, RollingUpdate, spread and a PDB, hardened', () => {
      const spec = deploymentSpec(find(objects, 'Deployment', 'metacontroller'))
      assert.equal(spec.replicas, 2)
      assert.deepEqual(spec.strategy, {
        type: 'RollingUpdate',
        rollingUpdate: { maxSurge: 1, maxUnavailable: 0 },
      })
      const spread = spec.template.spec['topologySpreadConstraints'] as {
        topologyKey: string
        labelSelector: { matchLabels: Record<string, string> }
      }[]
      const [first] = spread
      assert.ok(first)
      assert.equal(first.topologyKey, 'kubernetes.io/hostname')
      assert.deepEqual(first.labelSelector.matchLabels, spec.selector.matchLabels)
      const pdb = find(objects, 'PodDisruptionBudget', 'metacontroller')['spec'] as {
        minAvailable: number
        selector: { matchLabels: Record<string, string> }
      }
      assert.equal(pdb.minAvailable, 1)
      assert.deepEqual(pdb.selector.matchLabels, spec.selector.matchLabels)
      const lease = rulesOf(find(objects, 'Role', 'metacontroller-ts:leader-election'))
      assert.deepEqual(lease[0]?.resources, ['leases'])
      assert.ok(lease.some((r) => r.verbs.includes('update')))
      const pod = spec.template.spec
      assert.equal(pod['serviceAccountName'], 'metacontroller')
      assert.deepEqual(pod['securityContext'], {
        runAsNonRoot: true,
        runAsUser: 1000,
        runAsGroup: 1000,
        seccompProfile: { type: 'RuntimeDefault' },
      })
      const [container] = pod.containers
      assert.ok(container)
      assert.equal(container.image, IMAGE)
      assert.deepEqual(container.args, DEPLOYMENT_ARGS)
      // The engine's namespace, home of cluster-scoped parents' ControllerRevisions.
      assert.deepEqual(container['env'], [
        { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      ])
      assert.deepEqual(container['ports'], [
        { name: 'metrics', containerPort: 9999, protocol: 'TCP' },
        { name: 'health', containerPort: 8081, protocol: 'TCP' },
      ])
      const probe = (name: string): unknown =>
        (container[name] as { httpGet: unknown } | undefined)?.httpGet
      assert.deepEqual(probe('livenessProbe'), { path: '/healthz', port: 'health' })
      assert.deepEqual(probe('readinessProbe'), { path: '/readyz', port: 'health' })
      const resources = container['resources'] as { requests?: object; limits?: object }
      assert.ok(resources.requests && resources.limits)
      assert.deepEqual(container['securityContext'], {
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'] },
      })
      const service = find(objects, 'Service', 'metacontroller-metrics')
      const serviceSpec = service['spec'] as {
        selector: Record<string, string>
        publishNotReadyAddresses?: boolean
      }
      assert.deepEqual(serviceSpec.selector, spec.selector.matchLabels)
      assert.equal(serviceSpec.publishNotReadyAddresses, true)
      assert.deepEqual(spec.selector.matchLabels, {
        'app.kubernetes.io/name': 'metacontroller-ts',
        'app.kubernetes.io/component': 'engine',
      })
    })

    it('grants the engine no wildcard and parents/children only through the aggregated role', () => {
      const engine = rulesOf(find(objects, 'ClusterRole', 'metacontroller-ts:engine'))
      const granted = engine.flatMap((r) =>
        r.apiGroups.flatMap((g) =>
          r.resources.flatMap((res) => r.verbs.map((v) => `${g}/${res}:${v}`))
        )
      )
      assert.ok(!granted.some((g) => g.includes('*')), granted.join(' '))
      for (const needed of [
        'metacontroller.k8s.io/compositecontrollers:watch',
        'metacontroller.k8s.io/decoratorcontrollers:list',
        'metacontroller.k8s.io/compositecontrollers/status:update',
        'metacontroller.k8s.io/controllerrevisions:delete',
        '/events:create',
        '/events:patch',
        'events.k8s.io/events:create',
        'apiextensions.k8s.io/customresourcedefinitions:watch',
      ])
        assert.ok(granted.includes(needed), `engine ClusterRole lacks ${needed}`)
      assert.ok(!granted.some((g) => /^(\/(pods|secrets|configmaps)|apps\/)/.test(g)))

      const controllers = find(objects, 'ClusterRole', 'metacontroller-ts:controllers')
      assert.deepEqual(controllers['aggregationRule'], {
        clusterRoleSelectors: [
          { matchLabels: { 'metacontroller-ts.dev/aggregate-to-controllers': 'true' } },
        ],
      })
      for (const name of ['metacontroller-ts:engine', 'metacontroller-ts:controllers']) {
        const binding = find(objects, 'ClusterRoleBinding', name)
        assert.deepEqual(binding['roleRef'], {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name,
        })
        assert.deepEqual(binding['subjects'], [
          { kind: 'ServiceAccount', name: 'metacontroller', namespace: NAMESPACE },
        ])
      }
    })

    it('passes a server-side dry run', async () => {
      await dryRun(objects, yaml)
    })

    it('runs a Pod that the restricted Pod Security Standard admits', async () => {
      const ns = `deploy-psa-${randomBytes(4).toString('hex')}`
      await plane.client.create(NAMESPACES, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: ns, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
      })
      try {
        const pod = (spec: unknown): string =>
          JSON.stringify({
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: 'engine', namespace: ns },
            spec,
          })
        const template = deploymentSpec(find(objects, 'Deployment', 'metacontroller')).template
        await kubectl(['apply', '--dry-run=server', '-f', '-'], pod(template.spec))
        // Every other Pod we ship: the sharded engine, the PodService hook, the scaffold's hook.
        const sharded = parseManifests(await kubectl(['kustomize', 'deploy/sharded']), 'sharded')
        const podService = parseManifests(
          readFileSync('examples/podservice/hook-deployment.yaml', 'utf8'),
          'examples/podservice/hook-deployment.yaml'
        )
        const names = scaffoldNames({
          name: 'psa',
          kind: 'Psa',
          group: 'example.com',
          version: 'v1',
        })
        const scaffold = parseManifests(manifestFiles(names)['deploy/hook.yaml'] ?? '', 'hook.yaml')
        for (const deployment of [...sharded, ...podService, ...scaffold]) {
          if (deployment.kind !== 'Deployment') continue
          const spec = deploymentSpec(deployment).template.spec
          await kubectl(['apply', '--dry-run=server', '-f', '-'], pod(spec))
        }
        // The check is live: a Pod without the hardening is refused.
        const bare = { containers: [{ name: 'engine', image: IMAGE }] }
        const refused = await sh(
          'kubectl',
          ['--kubeconfig', kubeconfig, 'apply', '--dry-run=server', '-f', '-'],
          { input: pod(bare) }
        )
        assert.notEqual(refused.code, 0)
        assert.match(refused.stderr, /violates PodSecurity "restricted/)
      } finally {
        await plane.client.delete(NAMESPACES, ns).catch(() => undefined)
      }
    })

    it('the PodService example overlay adds one aggregated ClusterRole and passes a dry run', async () => {
      const example = await kubectl(['kustomize', 'deploy/examples/podservice'])
      const exampleObjects = parseManifests(example, 'deploy/examples/podservice')
      assert.deepEqual(
        kindsOf(exampleObjects),
        [...kindsOf(objects), 'ClusterRole/metacontroller-ts:podservice-controller'].sort()
      )
      const role = find(exampleObjects, 'ClusterRole', 'metacontroller-ts:podservice-controller')
      assert.equal(role.metadata.labels?.['metacontroller-ts.dev/aggregate-to-controllers'], 'true')
      const resources = rulesOf(role).flatMap((r) =>
        r.apiGroups.flatMap((g) => r.resources.map((x) => `${g}/${x}`))
      )
      assert.deepEqual(resources.sort(), [
        '/pods',
        '/services',
        'homelabz.com.br/podservices',
        'homelabz.com.br/podservices/status',
        'networking.k8s.io/ingresses',
      ])
      await dryRun(exampleObjects, example)
    })

    it('is enough for the engine: run as the ServiceAccount, it serves a CompositeController', async () => {
      const id = randomBytes(4).toString('hex')
      const ns = `deploy-rbac-${id}`
      const prefix = `deploy-test-${id}`
      const parentCrd = testCrd('DeployParent')
      const childCrd = testCrd('DeployChild')
      const cc = `deploy-${id}`
      const rbacRef = (resource: string): ResourceRef => ({
        group: 'rbac.authorization.k8s.io',
        version: 'v1',
        resource,
        namespaced: false,
      })
      const saRef: ResourceRef = {
        group: '',
        version: 'v1',
        resource: 'serviceaccounts',
        namespaced: true,
      }
      const hook = await serveHook((body) => {
        const { parent } = body as { parent: KubeObject }
        const name = parent.metadata.name ?? ''
        return {
          status: { served: 'by the ServiceAccount' },
          children: [
            {
              apiVersion: childCrd.apiVersion,
              kind: 'DeployChild',
              metadata: { name, labels: { app: name } },
            },
          ],
        }
      })
      const cleanup: (() => Promise<unknown>)[] = [() => hook.close()]
      const ccObject: KubeObject = {
        apiVersion: 'metacontroller.k8s.io/v1alpha1',
        kind: 'CompositeController',
        metadata: { name: cc, labels: { 'deploy-test': id } },
        spec: {
          parentResource: { apiVersion: parentCrd.apiVersion, resource: 'deployparents' },
          childResources: [{ apiVersion: childCrd.apiVersion, resource: 'deploychilds' }],
          hooks: { sync: { webhook: { url: hook.url } } },
        },
      }
      const lines: Record<string, unknown>[] = []
      let proc: ChildProcess | undefined
      try {
        await plane.installCrds([parentCrd.crd, childCrd.crd])
        for (const { crd } of [parentCrd, childCrd])
          cleanup.push(() => plane.client.delete(CRD_RESOURCE, crd.metadata.name ?? ''))
        await plane.client.create(NAMESPACES, {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: ns },
        })
        cleanup.push(() => plane.client.delete(NAMESPACES, ns))
        await plane.client.create(saRef, {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          metadata: { name: 'metacontroller', namespace: ns },
        })
        const subject = { kind: 'ServiceAccount', name: 'metacontroller', namespace: ns }
        // The shipped engine rules, unchanged, under a test-unique name.
        const roles: [string, Rule[]][] = [
          ['engine', rulesOf(find(objects, 'ClusterRole', 'metacontroller-ts:engine'))],
          // What `metactl rbac` prints for the controller, and nothing else (the role a user
          // applies; this control plane runs no ClusterRole aggregation controller, so it is
          // bound directly).
          [
            'controllers',
            rulesOf(parse(rbacManifest([{ object: ccObject, origin: 'test' }]).yaml) as KubeObject),
          ],
        ]
        for (const [suffix, rules] of roles) {
          const name = `${prefix}:${suffix}`
          await plane.client.create(rbacRef('clusterroles'), {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'ClusterRole',
            metadata: { name },
            rules,
          })
          cleanup.push(() => plane.client.delete(rbacRef('clusterroles'), name))
          await plane.client.create(rbacRef('clusterrolebindings'), {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'ClusterRoleBinding',
            metadata: { name },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
            subjects: [subject],
          })
          cleanup.push(() => plane.client.delete(rbacRef('clusterrolebindings'), name))
        }
        // The shipped leader-election Role, in the namespace the engine runs in.
        const roleRef = (resource: string): ResourceRef => ({
          ...rbacRef(resource),
          namespaced: true,
        })
        const leaseRole = `${prefix}:leader-election`
        await plane.client.create(roleRef('roles'), {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: { name: leaseRole, namespace: ns },
          rules: rulesOf(find(objects, 'Role', 'metacontroller-ts:leader-election')),
        })
        await plane.client.create(roleRef('rolebindings'), {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: leaseRole, namespace: ns },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: leaseRole },
          subjects: [subject],
        })
        const as = `--as=system:serviceaccount:${ns}:metacontroller`
        const canI = async (...args: string[]): Promise<string> =>
          (
            await sh('kubectl', ['--kubeconfig', kubeconfig, 'auth', 'can-i', as, ...args])
          ).stdout.trim()
        // The RBAC authorizer sees new bindings through its informers, a moment later.
        await waitFor(
          async () => (await canI('watch', 'compositecontrollers.metacontroller.k8s.io')) === 'yes',
          { timeoutMs: 10_000, description: 'the engine binding to take effect' }
        )
        assert.equal(await canI('update', 'deployparents.test.metacontroller-ts.dev/status'), 'yes')
        assert.equal(await canI('get', 'secrets', '-A'), 'no')
        assert.equal(await canI('create', 'pods', '-A'), 'no')

        const token = (
          await kubectl(['create', 'token', 'metacontroller', '-n', ns, '--duration=1h'])
        ).trim()
        const saKubeconfig = join(work, `sa-${id}.kubeconfig`)
        writeFileSync(
          saKubeconfig,
          stringify({
            apiVersion: 'v1',
            kind: 'Config',
            clusters: [
              {
                name: 'c',
                cluster: {
                  server: plane.config.server,
                  ...(plane.config.caPem === undefined
                    ? {}
                    : {
                        'certificate-authority-data': Buffer.from(plane.config.caPem).toString(
                          'base64'
                        ),
                      }),
                },
              },
            ],
            users: [{ name: 'sa', user: { token } }],
            contexts: [{ name: 'sa', context: { cluster: 'c', user: 'sa', namespace: ns } }],
            'current-context': 'sa',
          }),
          { mode: 0o600 }
        )

        // The Deployment's own args; listen on loopback with free ports instead of :9999/:8081.
        const args = (
          deploymentSpec(find(objects, 'Deployment', 'metacontroller')).template.spec.containers[0]
            ?.args ?? []
        ).map((arg) =>
          arg.startsWith('--metrics-address=') || arg.startsWith('--health-probe-bind-address=')
            ? arg.replace(/=.*/, '=127.0.0.1:0')
            : arg
        )
        assert.equal(args[0], 'run')
        const running = spawn(
          process.execPath,
          [
            '--import',
            'tsx',
            'src/cli/main.ts',
            ...args,
            '--kubeconfig',
            saKubeconfig,
            `--target-label-selector=deploy-test=${id}`,
            // In a Pod the namespace comes from the ServiceAccount mount.
            `--leader-election-namespace=${ns}`,
          ],
          { stdio: ['ignore', 'ignore', 'pipe'] }
        )
        proc = running
        const exited = new Promise<number | null>((resolve) => running.once('exit', resolve))
        createInterface({ input: running.stderr }).on('line', (line) => {
          try {
            lines.push(JSON.parse(line) as Record<string, unknown>)
          } catch {
            // Every line is JSON; a stray one would only be skipped here.
          }
        })
        const probes = await waitFor(
          () =>
            lines.find((l) => l['msg'] === 'serving health probes')?.['address'] as
              string | undefined,
          { timeoutMs: 30_000, description: 'the "serving health probes" log line' }
        )
        await waitFor(() => lines.some((l) => l['msg'] === 'engine started'), {
          timeoutMs: 30_000,
          description: 'the engine to start as the ServiceAccount',
        })
        await waitFor(() => lines.some((l) => l['msg'] === 'Successfully acquired lease'), {
          timeoutMs: 30_000,
          description: 'the engine to lead with the shipped leader-election Role',
        })

        await plane.client.create(CCS, ccObject)
        cleanup.push(() => plane.client.delete(CCS, cc))
        await plane.client.create(parentCrd.ref, {
          apiVersion: parentCrd.apiVersion,
          kind: 'DeployParent',
          metadata: { name: 'web', namespace: ns },
          spec: { selector: { matchLabels: { app: 'web' } } },
        })
        await waitFor(
          () => plane.client.get(childCrd.ref, 'web', { namespace: ns }).catch(() => undefined),
          {
            timeoutMs: 30_000,
            description: 'the child created by the engine running as the ServiceAccount',
          }
        )
        await waitFor(
          async () => {
            const parent = await plane.client.get(parentCrd.ref, 'web', { namespace: ns })
            return (
              (parent['status'] as { served?: string } | undefined)?.served ===
              'by the ServiceAccount'
            )
          },
          { timeoutMs: 30_000, description: 'the parent status written by the ServiceAccount' }
        )
        // Events about the (cluster-scoped) CompositeController go to `default`.
        await waitFor(
          async () => {
            const events = await plane.client.list(EVENTS, { namespace: 'default' })
            return events.items.some(
              (e) =>
                (e['involvedObject'] as { name?: string } | undefined)?.name === cc &&
                e['reason'] === 'Started'
            )
          },
          { timeoutMs: 30_000, description: 'the Started event recorded by the ServiceAccount' }
        )
        const ready = await request(`http://${probes}/readyz`)
        assert.equal(ready.statusCode, 200, await ready.body.text())

        // Another engine in the same cluster without a --target-label-selector (an e2e test
        // running alongside) may also sync this parent; a refused request of ours still shows
        // up here, because the engine logs every failed write, watch and event.
        // The timestamp left out: one ending in .403 is not a refusal.
        const denied = lines.filter((l) =>
          /forbidden|\b403\b/i.test(JSON.stringify({ ...l, ts: undefined }))
        )
        assert.deepEqual(denied, [], 'the engine was refused a request')
        running.kill('SIGTERM')
        assert.equal(await exited, 0)
      } finally {
        if (proc?.exitCode === null) proc.kill('SIGKILL')
        for (const step of cleanup.reverse()) await step().catch(() => undefined)
      }
    })
  })

  describe('helm chart (deploy/helm/metacontroller-ts)', () => {
    const helmEnv = {
      ...process.env,
      HELM_CACHE_HOME: join(work, 'helm', 'cache'),
      HELM_CONFIG_HOME: join(work, 'helm', 'config'),
      HELM_DATA_HOME: join(work, 'helm', 'data'),
    }
    const helm = async (...args: string[]): Promise<string> => {
      const result = await sh(HELM, args, { env: helmEnv })
      assert.equal(
        result.code,
        0,
        `helm ${args.join(' ')} failed:\n${result.stderr}${result.stdout}`
      )
      return result.stdout
    }
    const template = (...extra: string[]): Promise<string> =>
      helm('template', 'metacontroller-ts', CHART, '--namespace', NAMESPACE, ...extra)

    it('lints cleanly', { skip: HELM_SKIP }, async () => {
      assert.match(await helm('version', '--short'), new RegExp(`^${HELM_VERSION}`))
      const out = await helm('lint', '--strict', CHART)
      assert.match(out, /1 chart\(s\) linted, 0 chart\(s\) failed/)
    })

    it(
      'renders the same engine as the kustomize manifests and passes a dry run',
      { skip: HELM_SKIP },
      async () => {
        const kustomized = parseManifests(
          await kubectl(['kustomize', 'deploy/manifests']),
          'kustomize'
        )
        const yaml = await template('--include-crds')
        const objects = parseManifests(yaml, 'helm template')
        assert.deepEqual(kindsOf(objects), [
          'ClusterRole/metacontroller-ts:controllers',
          'ClusterRole/metacontroller-ts:engine',
          'ClusterRoleBinding/metacontroller-ts:controllers',
          'ClusterRoleBinding/metacontroller-ts:engine',
          'CustomResourceDefinition/compositecontrollers.metacontroller.k8s.io',
          'CustomResourceDefinition/controllerrevisions.metacontroller.k8s.io',
          'CustomResourceDefinition/decoratorcontrollers.metacontroller.k8s.io',
          'Deployment/metacontroller-ts',
          'PodDisruptionBudget/metacontroller-ts',
          'Role/metacontroller-ts:leader-election',
          'RoleBinding/metacontroller-ts:leader-election',
          'Service/metacontroller-ts-metrics',
          'ServiceAccount/metacontroller-ts',
        ])
        // crds/ holds real copies of deploy/crds (a link would be dropped by npm pack).
        for (const crd of objects.filter((o) => o.kind === 'CustomResourceDefinition')) {
          assert.deepEqual(crd['spec'], find(kustomized, crd.kind, crd.metadata.name ?? '')['spec'])
        }
        for (const name of ['metacontroller-ts:engine', 'metacontroller-ts:controllers']) {
          const [ours, theirs] = [
            find(objects, 'ClusterRole', name),
            find(kustomized, 'ClusterRole', name),
          ]
          assert.deepEqual(ours['rules'], theirs['rules'], name)
          assert.deepEqual(ours['aggregationRule'], theirs['aggregationRule'], name)
          assert.deepEqual(find(objects, 'ClusterRoleBinding', name)['subjects'], [
            { kind: 'ServiceAccount', name: 'metacontroller-ts', namespace: NAMESPACE },
          ])
        }
        const helmSpec = deploymentSpec(find(objects, 'Deployment', 'metacontroller-ts'))
        const kustomizeSpec = deploymentSpec(find(kustomized, 'Deployment', 'metacontroller'))
        assert.equal(helmSpec.replicas, 2)
        assert.deepEqual(helmSpec.strategy, kustomizeSpec.strategy)
        const [helmPod, kustomizePod] = [helmSpec.template.spec, kustomizeSpec.template.spec]
        for (const field of ['securityContext', 'volumes', 'enableServiceLinks'])
          assert.deepEqual(helmPod[field], kustomizePod[field], field)
        const [ours, theirs] = [helmPod.containers[0], kustomizePod.containers[0]]
        assert.ok(ours && theirs)
        for (const field of [
          'image',
          'imagePullPolicy',
          'args',
          'env',
          'ports',
          'livenessProbe',
          'readinessProbe',
          'resources',
          'securityContext',
          'volumeMounts',
        ])
          assert.deepEqual(ours[field], theirs[field], field)
        const helmService = find(objects, 'Service', 'metacontroller-ts-metrics')
        const kustomizeService = find(kustomized, 'Service', 'metacontroller-metrics')
        const { selector: helmSelector, ...helmServiceSpec } = helmService['spec'] as Record<
          string,
          unknown
        >
        const { selector: kustomizeSelector, ...kustomizeServiceSpec } = kustomizeService[
          'spec'
        ] as Record<string, unknown>
        assert.deepEqual(helmSelector, helmSpec.selector.matchLabels)
        assert.deepEqual(kustomizeSelector, kustomizeSpec.selector.matchLabels)
        assert.deepEqual(helmServiceSpec, kustomizeServiceSpec)
        await dryRun(objects, yaml)
      }
    )

    it(
      'renders sharded mode as the deploy/sharded overlay: ring flags, server-side watches, a Lease Role that may delete',
      { skip: HELM_SKIP },
      async () => {
        const overlay = parseManifests(await kubectl(['kustomize', 'deploy/sharded']), 'kustomize')
        const sharded = [
          '--set',
          'leaderElection.enabled=false',
          '--set',
          'sharding.enabled=true',
          '--set',
          'replicas=3',
        ]
        const yaml = await template(...sharded)
        const objects = parseManifests(yaml, 'helm template (sharded)')
        const argsOf = (list: readonly KubeObject[], name: string): string[] =>
          deploymentSpec(find(list, 'Deployment', name)).template.spec.containers[0]?.args ?? []
        const ringFlags = (args: readonly string[]): string[] =>
          args.filter((a) => /^--(shard|leader-election)/.test(a)).sort()
        const ours = ringFlags(argsOf(objects, 'metacontroller-ts'))
        assert.deepEqual(ours, ringFlags(argsOf(overlay, 'metacontroller')))
        assert.ok(ours.includes('--sharding-server-side=true'), ours.join(' '))
        for (const list of [objects, overlay]) {
          const role = list.find(
            (o) => o.kind === 'Role' && (o.metadata.name ?? '').endsWith('leader-election')
          )
          assert.ok(role)
          assert.ok(rulesOf(role)[0]?.verbs.includes('delete'))
        }
        const clientSide = ringFlags(
          argsOf(
            parseManifests(
              await template(...sharded, '--set', 'sharding.serverSide=false'),
              'helm template (sharded, client-side)'
            ),
            'metacontroller-ts'
          )
        )
        assert.ok(clientSide.includes('--sharding-server-side=false'), clientSide.join(' '))
        await dryRun(objects, yaml)
      }
    )

    it('renders every option and passes a dry run', { skip: HELM_SKIP }, async () => {
      const extraRules: Rule[] = [
        {
          apiGroups: ['example.com'],
          resources: ['widgets'],
          verbs: ['get', 'list', 'watch', 'update', 'patch'],
        },
      ]
      const valuesFile = join(work, 'values.yaml')
      writeFileSync(
        valuesFile,
        stringify({
          image: { repository: 'registry.example/engine', tag: 'dev', pullPolicy: 'Never' },
          imagePullSecrets: [{ name: 'pull' }],
          args: [
            '--zap-log-level=debug',
            '--metrics-address=:9999',
            '--health-probe-bind-address=:8081',
          ],
          serviceAccount: { create: false, name: 'existing-sa' },
          replicas: 3,
          leaderElection: {
            enabled: true,
            id: 'custom',
            leaseDuration: '20s',
            renewDeadline: '15s',
            retryPeriod: '3s',
          },
          extraArgs: ['--workers=10'],
          env: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=400' }],
          podDisruptionBudget: { enabled: true, minAvailable: 2 },
          rbac: { extraRules, podServiceExample: true },
          metrics: { service: { enabled: false } },
          podAnnotations: { 'example.com/a': 'b' },
          podLabels: { team: 'platform' },
          priorityClassName: 'system-cluster-critical',
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }],
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  {
                    matchExpressions: [
                      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
                    ],
                  },
                ],
              },
            },
          },
        })
      )
      const yaml = await template('--values', valuesFile)
      const objects = parseManifests(yaml, 'helm template --values')
      assert.deepEqual(kindsOf(objects), [
        'ClusterRole/metacontroller-ts:controllers',
        'ClusterRole/metacontroller-ts:engine',
        'ClusterRole/metacontroller-ts:extra-rules',
        'ClusterRole/metacontroller-ts:podservice',
        'ClusterRoleBinding/metacontroller-ts:controllers',
        'ClusterRoleBinding/metacontroller-ts:engine',
        'Deployment/metacontroller-ts',
        'PodDisruptionBudget/metacontroller-ts',
        'Role/metacontroller-ts:leader-election',
        'RoleBinding/metacontroller-ts:leader-election',
      ])
      assert.equal(
        (
          find(objects, 'PodDisruptionBudget', 'metacontroller-ts')['spec'] as {
            minAvailable: number
          }
        ).minAvailable,
        2
      )
      assert.deepEqual(
        find(objects, 'RoleBinding', 'metacontroller-ts:leader-election')['subjects'],
        [{ kind: 'ServiceAccount', name: 'existing-sa', namespace: NAMESPACE }]
      )
      const aggregated = 'metacontroller-ts.dev/aggregate-to-controllers'
      const extra = find(objects, 'ClusterRole', 'metacontroller-ts:extra-rules')
      assert.equal(extra.metadata.labels?.[aggregated], 'true')
      assert.deepEqual(extra['rules'], extraRules)
      // The chart's PodService role is the kustomize example's.
      const example = readFileSync('deploy/examples/podservice/clusterrole.yaml', 'utf8')
      const [podService] = parseManifests(example, 'deploy/examples/podservice/clusterrole.yaml')
      assert.ok(podService)
      const chartPodService = find(objects, 'ClusterRole', 'metacontroller-ts:podservice')
      assert.equal(chartPodService.metadata.labels?.[aggregated], 'true')
      assert.deepEqual(chartPodService['rules'], podService['rules'])
      assert.deepEqual(
        find(objects, 'ClusterRoleBinding', 'metacontroller-ts:engine')['subjects'],
        [{ kind: 'ServiceAccount', name: 'existing-sa', namespace: NAMESPACE }]
      )
      const spec = deploymentSpec(find(objects, 'Deployment', 'metacontroller-ts'))
      const pod = spec.template.spec
      assert.equal(pod['serviceAccountName'], 'existing-sa')
      assert.equal(pod['priorityClassName'], 'system-cluster-critical')
      assert.deepEqual(pod['imagePullSecrets'], [{ name: 'pull' }])
      assert.deepEqual(pod['nodeSelector'], { 'kubernetes.io/os': 'linux' })
      assert.equal((pod['tolerations'] as unknown[]).length, 1)
      assert.ok(pod['affinity'])
      assert.equal(spec.template.metadata.labels['team'], 'platform')
      assert.equal(spec.replicas, 3)
      const [container] = pod.containers
      assert.equal(container?.image, 'registry.example/engine:dev')
      assert.deepEqual(container.args, [
        'run',
        '--zap-log-level=debug',
        '--metrics-address=:9999',
        '--health-probe-bind-address=:8081',
        '--leader-election',
        '--leader-election-id=custom',
        '--leader-election-lease-duration=20s',
        '--leader-election-renew-deadline=15s',
        '--leader-election-retry-period=3s',
        '--workers=10',
      ])
      assert.deepEqual(container['env'], [
        { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'NODE_OPTIONS', value: '--max-old-space-size=400' },
      ])
      await dryRun(objects, yaml)
    })

    it(
      'moves every namespaced object with namespaceOverride and renders a ServiceMonitor on request',
      { skip: HELM_SKIP },
      async () => {
        const objects = parseManifests(
          await template('--set', 'namespaceOverride=ops', '--set', 'serviceMonitor.enabled=true'),
          'helm template --set namespaceOverride'
        )
        const namespaced = objects.filter((o) => o.metadata.namespace !== undefined)
        assert.ok(namespaced.length >= 6)
        for (const object of namespaced) assert.equal(object.metadata.namespace, 'ops', object.kind)
        const monitor = find(objects, 'ServiceMonitor', 'metacontroller-ts')
        assert.deepEqual(
          (monitor['spec'] as { endpoints: { port: string }[] }).endpoints.map((e) => e.port),
          ['metrics']
        )
      }
    )

    it('refuses several replicas without leader election', { skip: HELM_SKIP }, async () => {
      const result = await sh(
        HELM,
        ['template', 'x', CHART, '--set', 'leaderElection.enabled=false'],
        {
          env: helmEnv,
        }
      )
      assert.notEqual(result.code, 0)
      assert.match(result.stderr, /replicas > 1 needs leaderElection.enabled/)
    })

    it('ships real CRD files equal to deploy/crds', () => {
      for (const name of ['compositecontrollers', 'decoratorcontrollers', 'controllerrevisions'])
        assert.equal(
          readFileSync(`${CHART}/crds/${name}.yaml`, 'utf8'),
          readFileSync(`deploy/crds/${name}.yaml`, 'utf8'),
          name
        )
    })
  })

  describe('Dockerfile', () => {
    const lines = readFileSync('Dockerfile', 'utf8')
      .replace(/\\\n/g, ' ')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'))
    const stages: string[][] = []
    for (const line of lines) {
      if (/^FROM\s/i.test(line)) stages.push([])
      stages.at(-1)?.push(line)
    }

    it('builds in a node:24 stage and runs production deps as a non-root user', () => {
      const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(lines.join('\n'))?.[1]
      assert.match(base ?? '', /^node:24-(alpine|slim|bookworm-slim)$/)
      assert.equal(stages.length, 2)
      const [build, runtime] = stages as [string[], string[]]
      assert.match(build[0] ?? '', /^FROM \$\{NODE_IMAGE\} AS build$/)
      assert.ok(build.some((l) => /^RUN npm ci\b/.test(l)))
      assert.ok(build.includes('RUN npm run build'))
      assert.match(runtime[0] ?? '', /^FROM \$\{NODE_IMAGE\}$/)
      assert.ok(runtime.some((l) => /^RUN npm ci --omit=dev\b/.test(l)))
      assert.ok(runtime.includes('COPY --from=build /src/dist ./dist'))
      const user = runtime.find((l) => l.startsWith('USER '))
      assert.match(user ?? '', /^USER (node|[1-9]\d*)(:\d+)?$/)
      assert.ok(runtime.includes('ENTRYPOINT ["node", "bin/metactl.js"]'))
      assert.ok(runtime.includes('CMD ["run"]'))
      assert.ok(runtime.some((l) => /^EXPOSE 9999 8081$/.test(l)))
      assert.ok(runtime.some((l) => l.startsWith('LABEL org.opencontainers.image.')))
      // tsc writes dist/ in the build stage's WORKDIR.
      assert.ok(build.includes('WORKDIR /src'))
      const tsconfig = JSON.parse(readFileSync('tsconfig.build.json', 'utf8')) as {
        compilerOptions: { outDir: string }
      }
      assert.equal(tsconfig.compilerOptions.outDir, 'dist')
    })

    it('copies only paths that exist and that .dockerignore keeps', () => {
      const ignored = readFileSync('.dockerignore', 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '' && !l.startsWith('#'))
      const sources = lines
        .filter((l) => l.startsWith('COPY ') && !l.includes('--from='))
        .flatMap((l) => l.split(/\s+/).slice(1, -1))
      assert.deepEqual(
        sources.filter((s) => !existsSync(s)),
        [],
        'COPY sources missing from the repository'
      )
      for (const source of sources) {
        const top = source.split('/')[0] ?? source
        assert.ok(
          !ignored.includes(source) && !ignored.includes(top),
          `.dockerignore drops ${source}`
        )
      }
      for (const needed of ['package.json', 'package-lock.json', 'src', 'bin', 'deploy/crds'])
        assert.ok(sources.includes(needed), `the Dockerfile does not copy ${needed}`)
      for (const excluded of ['node_modules', 'dist', '.git'])
        assert.ok(ignored.includes(excluded), `.dockerignore keeps ${excluded}`)
    })
  })
})
