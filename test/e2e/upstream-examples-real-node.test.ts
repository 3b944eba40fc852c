// Upstream's catset, bluegreen, indexedjob and service-per-pod examples
// (test/fixtures/upstream-examples, vendored unchanged) with their Pods running on a real node:
// each example's own test.sh runs as is against `metactl run`. The Pods they make are real
// containers from images built without Docker (tools/node/example-images.sh: nginx, busybox),
// catset's claims are bound by the cluster's default StorageClass, indexedjob's Pods really exit
// and `kubectl logs print-index-9` prints 9, and busybox (pulled `Always`, no tag) comes from the
// cluster's image mirror.
//
// What is adapted: the engine runs on the host, as in the other upstream-example tests, so each
// hook Deployment's program runs on the host too (test/support/host-deployment.ts; service-per-pod's
// Jsonnet hooks through tools/jsonnetd) and the engine reaches the hook URL's in-cluster name
// through `--hook-address`, as the Service would. Needs root, `make node` and `make examples`.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { findFreePort, metacontrollerCrdFiles } from '../../src/testing/index.js'
import { startRealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import type { RealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import { kubectl, runDeploymentOnHost } from '../support/host-deployment.js'
import type { HostDeployment } from '../support/host-deployment.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'

const FIXTURES = 'test/fixtures/upstream-examples'

/** Each example: its hook Deployment (and Service) name in the `metacontroller` namespace. */
const EXAMPLES = {
  catset: 'catset-controller',
  bluegreen: 'bluegreen-controller',
  indexedjob: 'indexedjob-controller',
  'service-per-pod': 'service-per-pod',
} as const

function exampleImages(env: NodeJS.ProcessEnv = process.env): string[] {
  const cache = env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache')
  const dir =
    env['METACTL_EXAMPLE_IMAGES'] ??
    join(
      cache,
      'metacontroller-ts',
      'controlplane',
      'example-images-nginx-deb12-busybox-jsonnetd-1'
    )
  const archives = ['nginx.tar', 'busybox.tar', 'jsonnetd.tar'].map((a) => join(dir, a))
  const missing = archives.filter((a) => !existsSync(a))
  if (missing.length > 0) {
    throw new Error(`${missing.join(', ')} missing: run \`make examples\` first`)
  }
  return archives
}

/** Runs an example's own test.sh in its directory; resolves with its exit code and output. */
function testScript(
  example: string,
  kubeconfig: string
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['test.sh'],
      {
        cwd: join(FIXTURES, example),
        timeout: 400_000,
        env: { ...process.env, KUBECONFIG: kubeconfig },
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
        resolve({ code, output: `${stdout}\n${stderr}` })
      }
    )
  })
}

/**
 * Records the container IDs the kubelet reports for Pods matching `selector` while `work` runs:
 * the proof that the example's Pods were real containers, since test.sh deletes them at the end.
 */
async function containerIdsDuring<T>(
  kubeconfig: string,
  selector: string,
  work: Promise<T>
): Promise<{ result: T; ids: Set<string> }> {
  const ids = new Set<string>()
  const polling = { done: false }
  const poll = (async () => {
    while (!polling.done) {
      const out = await kubectl(kubeconfig, [
        'get',
        'pods',
        '-l',
        selector,
        '-o',
        'jsonpath={range .items[*]}{.status.containerStatuses[*].containerID}{"\\n"}{end}',
      ])
      for (const id of (out ?? '').split(/\s+/)) if (id !== '') ids.add(id)
      await new Promise((r) => setTimeout(r, 1000))
    }
  })()
  try {
    return { result: await work, ids }
  } finally {
    polling.done = true
    await poll
  }
}

describe('upstream examples on a real node', () => {
  let cluster: RealNodeCluster | undefined
  let engine: SpawnedEngine | undefined
  const ports: Partial<Record<keyof typeof EXAMPLES, number>> = {}
  const hooks: HostDeployment[] = []

  before(async () => {
    cluster = await startRealNodeCluster({
      crds: metacontrollerCrdFiles(),
      images: exampleImages(),
    })
    // The examples expect Metacontroller installed, that is its namespace present.
    await kubectl(cluster.kubeconfigPath, ['create', 'namespace', 'metacontroller'])
    const mappings: string[] = []
    for (const [example, service] of Object.entries(EXAMPLES)) {
      const port = await findFreePort()
      ports[example as keyof typeof EXAMPLES] = port
      mappings.push('--hook-address', `${service}.metacontroller:80=127.0.0.1:${port}`)
    }
    engine = spawnEngine(cluster.kubeconfigPath, ['--discovery-interval', '1s', ...mappings])
    await engine.line('engine started')
  })

  after(async () => {
    engine?.kill()
    for (const hook of hooks) hook.stop()
    await cluster?.stop()
  })

  async function run(
    example: keyof typeof EXAMPLES,
    selector: string
  ): Promise<{ output: string; ids: Set<string> }> {
    assert.ok(cluster, 'the cluster started')
    const kubeconfig = cluster.kubeconfigPath
    const script = testScript(example, kubeconfig)
    const hook = await runDeploymentOnHost(
      kubeconfig,
      'metacontroller',
      EXAMPLES[example],
      ports[example] ?? 0
    )
    hooks.push(hook)
    const { result, ids } = await containerIdsDuring(kubeconfig, selector, script)
    assert.equal(result.code, 0, `${result.output}\nhook:\n${hook.output.join('')}`)
    return { output: result.output, ids }
  }

  it('catset: its Pods run in containerd with claims bound by the default StorageClass', async () => {
    const { ids } = await run('catset', 'app=nginx,component=backend')
    // Three Pods, then a fourth on scale-up: each a container the kubelet started.
    assert.ok(ids.size >= 4, `container IDs seen: ${[...ids].join(', ')}`)
    for (const id of ids) assert.match(id, /^containerd:\/\/[0-9a-f]{64}$/)
  })

  it('bluegreen: both colours roll out as real containers', async () => {
    const { ids } = await run('bluegreen', 'app=nginx,component=frontend')
    // Blue (3), then green (3), then blue again (3): a new container for each Pod.
    assert.ok(ids.size >= 9, `container IDs seen: ${[...ids].join(', ')}`)
  })

  it('indexedjob: its Pods really exit and `kubectl logs print-index-9` prints 9', async () => {
    const { output, ids } = await run('indexedjob', 'app=print-index')
    // test.sh itself reads the log through the kubelet and fails unless it is "9".
    assert.match(output, /Check that correct index is printed/)
    assert.equal(ids.size, 10, `container IDs seen: ${[...ids].join(', ')}`)
  })

  it('service-per-pod: a StatefulSet of real Pods, decorated through the Jsonnet hooks', async () => {
    const { ids } = await run('service-per-pod', 'app=nginx')
    assert.ok(ids.size >= 3, `container IDs seen: ${[...ids].join(', ')}`)
  })
})
