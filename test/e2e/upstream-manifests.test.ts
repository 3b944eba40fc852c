// Upstream Metacontroller's own manifests run our image unchanged. `manifests/production`,
// `manifests/dev`, `manifests/dev-ssa` and every vendored example's `manifest/args.yaml`
// (test/fixtures/upstream-examples, commit in UPSTREAM.md) are rendered with kustomize in
// upstream's directory layout, applied to a control plane of this test's own with only the image
// swapped for ours, and each StatefulSet's Pods are run as the kubelet would run them
// (test/support/pod-sandbox.ts): the container's command and args read back from the API server,
// resolved against our Dockerfile's ENTRYPOINT and CMD, executed from the image's files in a
// network namespace of the Pod's own, with the ServiceAccount of the manifests mounted and the
// in-cluster API address. The probes of the manifest must pass on the manifest's ports, the engine
// must serve a CompositeController (a parent synced through a hook), and SIGTERM must end it with
// exit code 0.
import assert from 'node:assert/strict'
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { execFileSync } from 'node:child_process'
import type { KubeObject } from '../../src/core/kube-object.js'
import { parseManifests, startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { CCS, EVENTS, serveHook, testCrd } from '../support/engine-fixture.js'
import type { ServedHook } from '../support/engine-fixture.js'
import { buildImage, kubeletArgv, runPod, sandboxUnavailable } from '../support/pod-sandbox.js'
import type { ContainerCommand, Image, PodSandbox } from '../support/pod-sandbox.js'

const FIXTURES = 'test/fixtures/upstream-examples'
const IMAGE = 'ghcr.io/metacontroller-ts/metacontroller-ts:0.1.0'
const SKIP = sandboxUnavailable()

interface Probe {
  readonly httpGet: { readonly path: string; readonly port: number }
}
interface Container extends ContainerCommand {
  readonly image: string
  readonly livenessProbe?: Probe
  readonly readinessProbe?: Probe
}

/** Upstream's tree: `manifests/` and `examples/<name>/` side by side, as its kustomizations expect. */
function upstreamTree(): { root: string; overlays: [string, string][] } {
  const root = mkdtempSync(join(tmpdir(), 'upstream-tree-'))
  cpSync(join(FIXTURES, 'manifests'), join(root, 'manifests'), { recursive: true })
  const overlays: [string, string][] = ['production', 'dev', 'dev-ssa'].map((name) => [
    `manifests/${name}`,
    join(root, 'manifests', name),
  ])
  for (const name of readdirSync(FIXTURES)) {
    if (!existsSync(join(FIXTURES, name, 'manifest', 'args.yaml'))) continue
    cpSync(join(FIXTURES, name), join(root, 'examples', name), { recursive: true })
    overlays.push([`examples/${name}/manifest`, join(root, 'examples', name, 'manifest')])
  }
  return { root, overlays }
}

describe("upstream's manifests with our image", { skip: SKIP }, () => {
  let plane: ControlPlane
  let image: Image
  let tree: ReturnType<typeof upstreamTree>
  let hook: ServedHook
  const parent = testCrd('UpstreamParent')
  const child = testCrd('UpstreamChild')

  const kubectl = (args: readonly string[], input?: string): string =>
    execFileSync('kubectl', ['--kubeconfig', plane.kubeconfigPath, ...args], {
      encoding: 'utf8',
      ...(input === undefined ? {} : { input }),
    })

  before(async () => {
    tree = upstreamTree()
    // First: tsc holds the event loop for a while, which would leave the plane's idle connections
    // to be closed under the client.
    image = buildImage('.')
    plane = await startControlPlane({ useExistingCluster: false, nodes: 0 })
    await plane.installCrds([parent.crd, child.crd])
    hook = await serveHook((body) => {
      const name = (body as { parent: KubeObject }).parent.metadata.name ?? ''
      return {
        status: { synced: true },
        children: [{ apiVersion: child.apiVersion, kind: 'UpstreamChild', metadata: { name } }],
      }
    })
  })

  after(async () => {
    await hook.close()
    await plane.stop()
    image.remove()
    rmSync(tree.root, { recursive: true, force: true })
  })

  /** Renders and applies `dir` with our image; returns the StatefulSet as the API server has it. */
  function deploy(dir: string): { replicas: number; container: Container } {
    const objects = parseManifests(kubectl(['kustomize', dir]), dir)
    const set = objects.find((o) => o.kind === 'StatefulSet')
    assert.ok(set, `${dir} renders no StatefulSet`)
    const spec = set['spec'] as { template: { spec: { containers: { image: string }[] } } }
    for (const container of spec.template.spec.containers) container.image = IMAGE
    kubectl(
      ['apply', '--server-side', '--force-conflicts', '-f', '-'],
      objects.map((o) => JSON.stringify(o)).join('\n')
    )
    const stored = JSON.parse(
      kubectl(['get', 'statefulset', 'metacontroller', '-n', 'metacontroller', '-o', 'json'])
    ) as { spec: { replicas?: number; template: { spec: { containers: Container[] } } } }
    const [container] = stored.spec.template.spec.containers
    assert.ok(container)
    assert.equal(container.image, IMAGE)
    return { replicas: stored.spec.replicas ?? 1, container }
  }

  async function probe(pod: PodSandbox, p: Probe | undefined, what: string): Promise<void> {
    if (p === undefined) return
    await waitFor(
      async () =>
        (await pod.get(p.httpGet.port, p.httpGet.path).catch(() => undefined))?.status === 200,
      { timeoutMs: 60_000, intervalMs: 250, description: `${what} ${p.httpGet.path}` }
    )
  }

  /** The Pod's log is zap's: JSON lines, or the console layout under `--zap-devel`. */
  function zapLines(lines: readonly string[], argv: readonly string[]): void {
    const verbosity = Number(
      /^--zap-log-level=(\d+)$/.exec(
        argv.find((a) => a.startsWith('--zap-log-level=')) ?? ''
      )?.[1] ?? 0
    )
    assert.ok(verbosity >= 4, 'every overlay asks for V(4) or more')
    if (argv.includes('--zap-devel')) {
      const heads = lines.filter((l) => /^\S+\t(DEBUG|INFO|WARN|ERROR|LEVEL\(-\d\))\t/.test(l))
      assert.ok(heads.length > 0, lines.slice(0, 5).join('\n'))
      assert.ok(heads.some((l) => l.includes('\tLEVEL(-4)\t') && l.includes('API write')))
      return
    }
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    for (const line of parsed) {
      assert.deepEqual(Object.keys(line).slice(0, 2), ['level', 'ts'])
      assert.equal(typeof line['ts'], 'number')
      assert.equal(typeof line['caller'], 'string')
    }
    assert.ok(parsed.some((l) => l['level'] === 'Level(-4)' && l['msg'] === 'API write'))
    assert.ok(!parsed.some((l) => l['level'] === 'Level(-5)'), 'nothing above V(4)')
  }

  /** A CompositeController of this overlay, one parent, and the child its hook asks for. */
  async function syncsAParent(id: string): Promise<void> {
    await plane.client.create(CCS, {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: id },
      spec: {
        generateSelector: true,
        parentResource: { apiVersion: parent.apiVersion, resource: 'upstreamparents' },
        childResources: [{ apiVersion: child.apiVersion, resource: 'upstreamchilds' }],
        hooks: { sync: { webhook: { url: hook.url } } },
      },
    })
    await plane.client.create(parent.ref, {
      apiVersion: parent.apiVersion,
      kind: 'UpstreamParent',
      metadata: { name: id, namespace: 'default' },
    })
    try {
      await waitFor(
        () => plane.client.get(child.ref, id, { namespace: 'default' }).catch(() => undefined),
        {
          timeoutMs: 60_000,
          description: `the child of parent ${id}`,
        }
      )
    } finally {
      await plane.client.delete(CCS, id).catch(() => undefined)
      await plane.client.delete(parent.ref, id, { namespace: 'default' }).catch(() => undefined)
    }
    // The hosted controller's own events and the meta level's, on the CompositeController.
    await waitFor(
      async () => {
        const list = (await plane.client.list(EVENTS, { namespace: 'default' })) as unknown as {
          items: { reason?: string; involvedObject: { name?: string; kind?: string } }[]
        }
        const reasons = new Set(
          list.items
            .filter(
              (e) => e.involvedObject.kind === 'CompositeController' && e.involvedObject.name === id
            )
            .map((e) => e.reason)
        )
        return ['Starting', 'Started', 'Stopping', 'Stopped'].every((r) => reasons.has(r))
      },
      { timeoutMs: 30_000, description: `Starting, Started, Stopping and Stopped events of ${id}` }
    )
  }

  it('renders every overlay present', () => {
    assert.deepEqual(
      tree.overlays.map(([name]) => name),
      [
        'manifests/production',
        'manifests/dev',
        'manifests/dev-ssa',
        'examples/leader-election/manifest',
        'examples/pprof-profiling/manifest',
      ]
    )
  })

  for (const [index, name] of [
    'manifests/production',
    'manifests/dev',
    'manifests/dev-ssa',
    'examples/leader-election/manifest',
    'examples/pprof-profiling/manifest',
  ].entries()) {
    it(`${name}: runs as the kubelet would, passes its probes, serves a controller, stops on SIGTERM`, async () => {
      const dir = tree.overlays.find(([n]) => n === name)?.[1]
      assert.ok(dir, `${name} is not vendored`)
      const { replicas, container } = deploy(dir)
      const argv = kubeletArgv(image, container)
      const token = kubectl(['create', 'token', 'metacontroller', '-n', 'metacontroller']).trim()
      const pprof = argv.some((a) => a.startsWith('--pprof-address=:'))
      const pods: PodSandbox[] = []
      try {
        for (let i = 0; i < replicas; i++)
          pods.push(
            await runPod({
              image,
              argv,
              apiServer: { host: '127.0.0.1', port: Number(new URL(plane.config.server).port) },
              serviceAccount: {
                token,
                caPem: plane.config.caPem ?? '',
                namespace: 'metacontroller',
              },
              podName: `metacontroller-${i}`,
              hostPorts: [Number(new URL(hook.url).port)],
              podPorts: [8081, 9999, ...(pprof ? [6060] : [])],
            })
          )
        for (const pod of pods) {
          await probe(pod, container.readinessProbe, 'readiness')
          await probe(pod, container.livenessProbe, 'liveness')
        }
        await syncsAParent(`upstream-${index}`)
        // With leader election only the leader writes: read its metrics and logs.
        const first =
          pods.find((p) => p.lines.some((l) => l.includes('Successfully acquired lease'))) ??
          pods[0]
        assert.ok(first)
        const metrics = (await first.get(9999, '/metrics')).body
        for (const series of [
          'controller_runtime_reconcile_total',
          'controller_runtime_active_workers',
          'controller_runtime_max_concurrent_reconciles{controller="compositecontroller-metacontroller"} 4',
          `controller_runtime_max_concurrent_reconciles{controller="CompositeController-upstream-${index}"} 5`,
          'workqueue_unfinished_work_seconds',
          'workqueue_longest_running_processor_seconds',
        ])
          assert.ok(metrics.includes(`\n${series}`), `${series} on /metrics`)
        if (pprof) assert.equal((await first.get(6060, '/debug/pprof/heap')).status, 200)
        zapLines(first.lines, argv)
        if (replicas > 1) {
          const leaders = pods.filter((p) =>
            p.lines.some((l) => l.includes('Successfully acquired lease'))
          )
          assert.equal(leaders.length, 1, 'exactly one replica leads')
        }
      } catch (error) {
        await Promise.all(pods.map((pod) => pod.stop('SIGKILL')))
        throw error
      }
      const codes = await Promise.all(pods.map((pod) => pod.stop()))
      assert.deepEqual(
        codes,
        pods.map(() => 0),
        pods.map((p) => p.lines.slice(-20).join('\n')).join('\n---\n')
      )
    })
  }
})
