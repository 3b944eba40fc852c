// Upstream's daemonjob example (test/fixtures/upstream-examples/daemonjob, vendored unchanged) on
// two real nodes, as upstream's own CI runs it on a kind cluster with two workers: its test.sh
// runs as is, the DaemonSet its hook makes gets a real Pod on each node (busybox's init container
// runs in containerd and exits, then the pause container becomes Ready), the DaemonJob completes
// when every node's Pod is Ready, and the DaemonSet is deleted.
//
// What is adapted: the engine runs on the host, as in test/e2e/upstream-examples-real-node.test.ts,
// so the hook Deployment's Python program runs on the host too (test/support/host-deployment.ts)
// and the engine reaches the hook URL's in-cluster name through `--hook-address`. The images are
// built here: busybox by tools/node/example-images.sh (`make examples`), and the hook's
// `gcr.io/google_containers/pause` (no tag, so pulled `Always`) is the node's own pause binary
// (compiled from Kubernetes' pause.c by tools/node/images.sh) under that name, served by the
// cluster's image mirror. Needs root, `make node` and `make examples`.
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { findFreePort, metacontrollerCrdFiles } from '../../src/testing/index.js'
import {
  defaultNodeBinDir,
  defaultNodeImagesDir,
} from '../../src/cluster/real-node/node-binaries.js'
import { startRealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import type { RealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import { kubectl, runDeploymentOnHost } from '../support/host-deployment.js'
import type { HostDeployment } from '../support/host-deployment.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'
import { exampleImageArchive } from '../support/example-image-archive.js'

const EXAMPLE = 'test/fixtures/upstream-examples/daemonjob'
const HOOK = 'daemonjob-controller'
const PAUSE_TAG = 'gcr.io/google_containers/pause:latest'

// The node's pause image's one binary, re-packed under the name daemonjob's hook gives it.
function pauseArchive(work: string): string {
  const nodePause = join(defaultNodeImagesDir(), 'pause.tar')
  const manifest = JSON.parse(
    execFileSync('tar', ['-xOf', nodePause, 'manifest.json'], { encoding: 'utf8' })
  ) as { Layers: string[] }[]
  const layer = manifest[0]?.Layers[0] ?? ''
  execFileSync('sh', ['-c', `tar -xOf "$0" "$1" | tar -xz -C "$2" pause`, nodePause, layer, work])
  const out = join(work, 'gcr-pause.tar')
  execFileSync(join(defaultNodeBinDir(), 'oci-image'), [
    ...['-tag', PAUSE_TAG, '-o', out, '-file', `${join(work, 'pause')}=/pause`],
    ...['-user', '65535:65535', '-entrypoint', '/pause'],
  ])
  return out
}

function testScript(kubeconfig: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['test.sh'],
      { cwd: EXAMPLE, timeout: 300_000, env: { ...process.env, KUBECONFIG: kubeconfig } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
        resolve({ code, output: `${stdout}\n${stderr}` })
      }
    )
  })
}

// The nodes on which a Pod of the DaemonSet had its init container (busybox, 30 s) created by
// containerd, while `work` runs (test.sh deletes the Pods at the end). Readiness is test.sh's own
// check: it waits until the DaemonSet's ready count equals the nodes it is scheduled on.
async function nodesDuring<T>(
  kubeconfig: string,
  work: Promise<T>
): Promise<{ result: T; nodes: Set<string> }> {
  const nodes = new Set<string>()
  const polling = { done: false }
  const poll = (async () => {
    const template =
      '{range .items[*]}{.spec.nodeName}{"|"}{.status.initContainerStatuses[0].containerID}{"\\n"}{end}'
    while (!polling.done) {
      const out = await kubectl(kubeconfig, [
        ...['get', 'pods', '-l', 'app=hello-world'],
        ...['-o', `jsonpath=${template}`],
      ])
      for (const line of (out ?? '').split('\n')) {
        const [node = '', containerId = ''] = line.split('|')
        if (node !== '' && containerId.startsWith('containerd://')) nodes.add(node)
      }
      await new Promise((r) => setTimeout(r, 1000))
    }
  })()
  try {
    return { result: await work, nodes }
  } finally {
    polling.done = true
    await poll
  }
}

describe("upstream's daemonjob example on two real nodes", () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-daemonjob-'))
  let cluster: RealNodeCluster | undefined
  let engine: SpawnedEngine | undefined
  let hook: HostDeployment | undefined
  let hookPort = 0

  before(async () => {
    cluster = await startRealNodeCluster({
      crds: metacontrollerCrdFiles(),
      images: [exampleImageArchive('busybox'), pauseArchive(work)],
      realNodes: 2,
    })
    // The example expects Metacontroller installed, that is its namespace present.
    await kubectl(cluster.kubeconfigPath, ['create', 'namespace', 'metacontroller'])
    hookPort = await findFreePort()
    engine = spawnEngine(cluster.kubeconfigPath, [
      ...['--discovery-interval', '1s'],
      ...['--hook-address', `${HOOK}.metacontroller:80=127.0.0.1:${hookPort}`],
    ])
    await engine.line('engine started')
  })

  after(async () => {
    engine?.kill()
    hook?.stop()
    await cluster?.stop()
    rmSync(work, { recursive: true, force: true })
  })

  it("passes test.sh unchanged, with a real container of the DaemonSet's on each node", async () => {
    assert.ok(cluster, 'the cluster started')
    const kubeconfig = cluster.kubeconfigPath
    const script = testScript(kubeconfig)
    hook = await runDeploymentOnHost(kubeconfig, 'metacontroller', HOOK, hookPort)
    const { result, nodes } = await nodesDuring(kubeconfig, script)
    const hookOutput = hook.output.join('')
    assert.equal(result.code, 0, `${result.output}\nhook:\n${hookOutput}`)
    assert.match(result.output, /Check that DaemonSet gets cleaned up after finishing/)
    assert.deepEqual([...nodes].sort(), cluster.nodeNames)
  })
})
