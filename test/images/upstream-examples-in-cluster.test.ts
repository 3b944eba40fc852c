// Upstream Metacontroller's examples (test/fixtures/upstream-examples, vendored unchanged) as a
// user of upstream runs them, on one cluster with a real node: the engine is installed in-cluster
// by our chart (deploy/helm/metacontroller-ts, as upstream's StatefulSet `metacontroller` in the
// `metacontroller` namespace) from the image built from the repository's Dockerfile; each
// example's own test.sh then applies its manifests unchanged, hook Deployment included, and the
// hook runs in a Pod of the image its manifest names (tools/images/example-hook-images.sh:
// metacontroller/nodejs-server:0.1, metacontroller/jsonnetd:0.1, python:3.11, python:3.11-slim).
// Nothing runs on the host but test.sh and kubectl: the engine reaches each hook at its Service
// name through the cluster's DNS; the Pods the examples make are containers on the node. Needs
// root, `make node`, `make examples`, `make helm` and the builder; `make images` runs it (about
// 6 min warm). Which examples are here, and why the others are not, is in docs/compat.md.
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { buildImage, runImagesScript } from '../../src/cluster/images/image-builder.js'
import { normalizeImageName } from '../../src/cluster/images/load-images.js'
import { startRealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import type { RealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'

const REPO = resolve(import.meta.dirname, '..', '..')
const FIXTURES = join(REPO, 'test', 'fixtures', 'upstream-examples')
const VERSION = (
  JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }
).version
/** The chart's default image (its appVersion), as the repository's Dockerfile is built. */
const ENGINE_IMAGE = `ghcr.io/metacontroller-ts/metacontroller-ts:${VERSION}`
const ENGINE_ARCHIVE = join(REPO, '.tmp', 'images', 'engine-dockerfile.tar')
/** upstream's examples/test.sh gives each example 5 minutes. */
const EXAMPLE_TIMEOUT_MS = 5 * 60_000

/** Pods an example's children make: their labels, and how many containers they must run. */
interface ChildPods {
  readonly labels: Readonly<Record<string, string>>
  /** Distinct containers the kubelet started for them, at least (or exactly, with `exact`). */
  readonly containers: number
  readonly exact?: boolean
}

/**
 * The examples run here, in upstream's order (examples/test.sh runs `*\/test.sh` sorted): the
 * image its hook Deployment names, and for those whose children are Pods, what proves them real
 * containers (test.sh deletes them at its end). The others cannot pass in-cluster on one real
 * node: docs/compat.md says why for each.
 */
const EXAMPLES: Readonly<Record<string, { hook: string; children?: ChildPods }>> = {
  // Blue (3), then green (3), then blue again (3): a new container for each Pod.
  bluegreen: {
    hook: 'metacontroller/nodejs-server:0.1',
    children: { labels: { app: 'nginx', component: 'frontend' }, containers: 9 },
  },
  // Three Pods (their claims bound by the default StorageClass), then a fourth on scale-up.
  catset: {
    hook: 'metacontroller/nodejs-server:0.1',
    children: { labels: { app: 'nginx', component: 'backend' }, containers: 4 },
  },
  clusteredparent: { hook: 'python:3.11' },
  'configmap-list-v2': { hook: 'python:3.11' },
  configmappropagation: { hook: 'python:3.11' },
  'crd-roles': { hook: 'python:3.11' },
  globalconfigmap: { hook: 'python:3.11' },
  // Ten Pods that really exit; test.sh reads `kubectl logs print-index-9` through the kubelet.
  indexedjob: {
    hook: 'python:3.11',
    children: { labels: { app: 'print-index' }, containers: 10, exact: true },
  },
  'namespace-list-v2': { hook: 'python:3.11' },
  secretpropagation: { hook: 'python:3.11' },
  // A StatefulSet of real Pods, decorated through the Jsonnet hooks.
  'service-per-pod': {
    hook: 'metacontroller/jsonnetd:0.1',
    children: { labels: { app: 'nginx' }, containers: 3 },
  },
  'service-per-pod-v2': { hook: 'metacontroller/jsonnetd:0.1' },
  'update-strategy': { hook: 'python:3.11-slim' },
  'webhook-auth': { hook: 'python:3.11' },
}

const progress = (line: string): void => {
  if (line.startsWith('images: [') || line.startsWith('images: example hook')) {
    console.log(`  ${line}`)
  }
}

/** Runs a tools/ build script; resolves with the path it prints last. */
function toolOutput(script: string): string {
  const out = execFileSync('bash', [join(REPO, script)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return out.trim().split('\n').at(-1) ?? ''
}

/**
 * Every image archive the examples need: the engine (built from the Dockerfile, or the archive
 * dockerfile-builds.test.ts left), the hook images, and the nginx and busybox images their
 * children run (tools/node/example-images.sh; its jsonnetd is left out, ours replaces it).
 */
async function imageArchives(): Promise<string[]> {
  if (!existsSync(ENGINE_ARCHIVE)) {
    await buildImage({ context: REPO, tag: ENGINE_IMAGE, output: ENGINE_ARCHIVE })
  }
  const hooks = await runImagesScript(
    join(REPO, 'tools', 'images', 'example-hook-images.sh'),
    [],
    progress
  )
  const children = toolOutput('tools/node/example-images.sh')
  return [
    ENGINE_ARCHIVE,
    ...['nodejs-server', 'jsonnetd', 'python-3.11', 'python-3.11-slim'].map((name) =>
      join(hooks, `${name}.tar`)
    ),
    join(children, 'nginx.tar'),
    join(children, 'busybox.tar'),
  ]
}

/** Runs a command to its end; resolves with its exit code, output (stdout, then stderr) and stdout. */
function runCommand(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number }
): Promise<{ code: number; output: string; stdout: string }> {
  return new Promise((resolvePromise) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd ?? REPO,
        env: { ...process.env, ...options.env },
        timeout: options.timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
        resolvePromise({ code, output: `${stdout}\n${stderr}`, stdout })
      }
    )
  })
}

/** A Pod seen while an example ran: where, its labels, its image, its containers' IDs. */
interface SeenPod {
  readonly namespace: string
  readonly labels: Readonly<Record<string, string>>
  /** As the Pod spec names it: the kubelet reports an image by any of its names. */
  readonly image: string
  readonly containerIds: readonly string[]
}

/** The Pods of the cluster created since `since` (ms), from `kubectl get pods -A -o json`. */
async function recentPods(kubeconfig: string, since: number): Promise<Map<string, SeenPod>> {
  const { code, stdout } = await runCommand('kubectl', ['get', 'pods', '-A', '-o', 'json'], {
    env: { KUBECONFIG: kubeconfig },
    timeoutMs: 30_000,
  })
  const pods = new Map<string, SeenPod>()
  if (code !== 0) return pods
  const list = JSON.parse(stdout) as {
    items: {
      metadata: { namespace: string; name: string; creationTimestamp: string; labels?: object }
      spec: { containers: { image: string }[] }
      status?: { containerStatuses?: { containerID?: string }[] }
    }[]
  }
  for (const pod of list.items) {
    // Creation times have whole seconds.
    if (Date.parse(pod.metadata.creationTimestamp) < since - 1000) continue
    pods.set(`${pod.metadata.namespace}/${pod.metadata.name}`, {
      namespace: pod.metadata.namespace,
      labels: (pod.metadata.labels ?? {}) as Record<string, string>,
      image: pod.spec.containers[0]?.image ?? '',
      containerIds: (pod.status?.containerStatuses ?? []).flatMap((c) =>
        c.containerID === undefined ? [] : [c.containerID]
      ),
    })
  }
  return pods
}

/**
 * The Pods created since `since` that had started containers while `work` ran, polled each
 * second, keyed by namespace/name: test.sh deletes what it made at its end.
 */
async function podsDuring<T>(
  kubeconfig: string,
  since: number,
  work: Promise<T>
): Promise<{ result: T; pods: SeenPod[] }> {
  const seen = new Map<string, SeenPod>()
  const polling = { done: false }
  const poll = (async () => {
    while (!polling.done) {
      for (const [key, pod] of await recentPods(kubeconfig, since)) {
        const before = seen.get(key)?.containerIds ?? []
        seen.set(key, { ...pod, containerIds: [...new Set([...before, ...pod.containerIds])] })
      }
      await new Promise((r) => setTimeout(r, 1000))
    }
  })()
  try {
    return { result: await work, pods: [...seen.values()] }
  } finally {
    polling.done = true
    await poll
  }
}

/** Checks that the hook ran in a Pod of its image and the children's Pods as real containers. */
function assertRealContainers(
  expected: { hook: string; children?: ChildPods },
  pods: readonly SeenPod[]
): void {
  const containerd = /^containerd:\/\/[0-9a-f]{64}$/
  const hooks = pods.filter(
    (p) =>
      p.namespace === 'metacontroller' &&
      normalizeImageName(p.image) === normalizeImageName(expected.hook) &&
      p.containerIds.some((id) => containerd.test(id))
  )
  const summary = pods.map((p) => `${p.namespace} ${p.image} ${String(p.containerIds.length)}`)
  assert.ok(hooks.length > 0, `no hook container of ${expected.hook}: ${summary.join(', ')}`)
  if (expected.children === undefined) return
  const { labels, containers, exact } = expected.children
  const ids = new Set(
    pods
      .filter((p) => Object.entries(labels).every(([k, v]) => p.labels[k] === v))
      .flatMap((p) => p.containerIds)
  )
  for (const id of ids) assert.match(id, containerd)
  if (exact === true) assert.equal(ids.size, containers, [...ids].join(', '))
  else assert.ok(ids.size >= containers, `child containers seen: ${[...ids].join(', ')}`)
}

/**
 * Installs the engine with our chart as upstream's manifests name it (release `metacontroller`,
 * a StatefulSet, Pod `metacontroller-0`) with upstream's rights (every verb on every resource:
 * the examples' children range from Secrets to ClusterRoles), one replica; waits until ready.
 */
async function installEngine(kubeconfig: string): Promise<void> {
  const helm = toolOutput('tools/helm/build.sh')
  const { code, output } = await runCommand(
    helm,
    [
      ...['install', 'metacontroller', join(REPO, 'deploy', 'helm', 'metacontroller-ts')],
      ...['--namespace', 'metacontroller', '--create-namespace', '--kubeconfig', kubeconfig],
      ...['--set', 'workload=StatefulSet', '--set', 'replicas=1'],
      ...['--set-json', 'rbac.extraRules=[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]'],
      ...['--wait', '--timeout', '5m'],
    ],
    { timeoutMs: 6 * 60_000 }
  )
  assert.equal(code, 0, `helm install failed:\n${output}`)
}

describe("upstream's examples in-cluster on a real node", { timeout: 90 * 60_000 }, () => {
  let cluster: RealNodeCluster | undefined
  const started = Date.now()

  before(async () => {
    const images = await imageArchives()
    cluster = await startRealNodeCluster({ images })
    await installEngine(cluster.kubeconfigPath)
    console.log(`  cluster up, engine installed in ${Math.round((Date.now() - started) / 1000)} s`)
  })

  after(async () => {
    await cluster?.stop()
    console.log(`  all examples in ${Math.round((Date.now() - started) / 1000)} s`)
  })

  for (const [example, expected] of Object.entries(EXAMPLES)) {
    it(`${example}: its own test.sh passes, its hook a Pod of ${expected.hook} called at its Service name`, async () => {
      assert.ok(cluster, 'the cluster started')
      const kubeconfig = cluster.kubeconfigPath
      const begun = Date.now()
      // As upstream's examples/test.sh runs each one: in its directory, `./test.sh v1`.
      const script = runCommand('bash', ['test.sh', 'v1'], {
        cwd: join(FIXTURES, example),
        env: { KUBECONFIG: kubeconfig },
        timeoutMs: EXAMPLE_TIMEOUT_MS,
      })
      const { result, pods } = await podsDuring(kubeconfig, begun, script)
      const seconds = Math.round((Date.now() - begun) / 1000)
      if (result.code !== 0) {
        const engine = await runCommand(
          'kubectl',
          ['logs', '-n', 'metacontroller', 'metacontroller-0', '--tail', '60'],
          { env: { KUBECONFIG: kubeconfig }, timeoutMs: 30_000 }
        )
        assert.fail(
          `${example}/test.sh failed (exit ${String(result.code)}, ${String(seconds)} s):\n` +
            `${result.output}\nengine:\n${engine.output}`
        )
      }
      assertRealContainers(expected, pods)
      console.log(`  ${example}: passed in ${String(seconds)} s`)
    })
  }
})
