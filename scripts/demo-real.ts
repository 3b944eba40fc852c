// `make demo-real`: the PodService walkthrough on a cluster whose node really runs containers.
// The engine runs in-cluster from its own image, installed by its Helm chart (2 replicas, leader
// election); the hook runs as a Deployment; Traefik serves the PodService's Ingress on a
// 127.0.0.1 port; `curl` gets the page of the Pod. Everything stops at the end (also on failure).
// Non-interactive; exits 0 when every step worked, 1 when one did not.
//
//   node --import tsx scripts/demo-real.ts [--port 18080]
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { NotFoundError } from '../src/kube/index.js'
import type { ResourceRef } from '../src/kube/index.js'
import type { KubeObject } from 'metacontroller-ts'
import { findFreePort, waitFor } from '../src/testing/index.js'
import { startRealNodeCluster } from '../src/cluster/real-node/start-real-node-cluster.js'
import type { RealNodeCluster } from '../src/cluster/real-node/start-real-node-cluster.js'
import { defaultNodeBinDir } from '../src/cluster/real-node/node-binaries.js'
import { realNodeLayout } from '../src/cluster/real-node/real-node-layout.js'
import { Steps } from '../examples/podservice/local.js'
import type { Pod, PodService } from '../examples/podservice/hook.js'
import { PODS, PODSERVICES } from '../examples/podservice/stack.js'

const REPO = join(import.meta.dirname, '..')
const HELM = join(
  process.env['XDG_CACHE_HOME'] ?? join(process.env['HOME'] ?? '/root', '.cache'),
  'metacontroller-ts/helm/v4.3.2/helm'
)
const NODE_PORT = 30080
const NAMESPACE = 'demo'
const NAME = 'web'
const HOST = 'podservice.local'
const LEASES: ResourceRef = {
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  namespaced: true,
}

const out = (text: string): void => {
  process.stdout.write(`${text}\n`)
}

/** Runs a command, returns its stdout; on failure the error carries its stderr. */
function run(command: string, args: readonly string[], env?: NodeJS.ProcessEnv): string {
  try {
    return execFileSync(command, args, {
      cwd: REPO,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
      maxBuffer: 64 * 1024 * 1024,
    })
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? ''
    throw new Error(`${command} ${args.join(' ')} failed:\n${stderr.trim()}`, { cause: error })
  }
}

function hostPortOption(): number | undefined {
  const i = process.argv.indexOf('--port')
  return i === -1 ? undefined : Number(process.argv[i + 1])
}

// The image archives: pause, web:1 and web:2 (tools/node/images.sh), engine, hook and Traefik
// (tools/node/app-images.sh).
function buildImages(steps: Steps): string[] {
  steps.start('Build the images (no Docker, no registry)')
  const imagesDir = run(join(REPO, 'tools/node/images.sh'), []).trim()
  const appDir = run(join(REPO, 'tools/node/app-images.sh'), []).trim()
  const traefikTar = run('sh', ['-c', `ls "${appDir}"/traefik-*.tar | tail -1`]).trim()
  const archives = [
    join(appDir, 'engine.tar'),
    join(appDir, 'podservice-hook.tar'),
    join(imagesDir, 'web-2.tar'),
  ]
  for (const a of [join(imagesDir, 'pause.tar'), join(imagesDir, 'web.tar'), ...archives]) {
    steps.line(a)
  }
  steps.line(traefikTar)
  steps.done()
  return [...archives, traefikTar]
}

async function startCluster(
  steps: Steps,
  images: string[],
  hostPort: number
): Promise<RealNodeCluster> {
  steps.start('Start the cluster: control plane + a real node (containerd, kubelet, kube-proxy)')
  const cluster = await startRealNodeCluster({
    publish: [{ hostPort, nodePort: NODE_PORT }],
    images,
    onProgress: (line) => {
      steps.line(line)
    },
  })
  steps.line(`API server ${cluster.config.server}; node port ${NODE_PORT} on 127.0.0.1:${hostPort}`)
  steps.done()
  return cluster
}

function kubectl(cluster: RealNodeCluster, args: readonly string[]): string {
  return run('kubectl', ['--kubeconfig', cluster.kubeconfigPath, ...args]).trim()
}

function installIngressAndHook(steps: Steps, cluster: RealNodeCluster): string {
  steps.start('Install Traefik (ingress controller) and the PodService hook (Deployment + Service)')
  for (const file of ['tools/traefik/ingress.yaml', 'examples/podservice/crd.yaml']) {
    steps.line(`kubectl apply -f ${file}`)
    kubectl(cluster, ['apply', '-f', file])
  }
  steps.line('kubectl apply -f examples/podservice/hook-deployment.yaml')
  kubectl(cluster, ['apply', '-f', 'examples/podservice/hook-deployment.yaml'])
  for (const [ns, deployment] of [
    ['traefik', 'traefik'],
    ['metacontroller', 'podservice-hook'],
  ] as const) {
    kubectl(cluster, ['-n', ns, 'rollout', 'status', `deployment/${deployment}`, '--timeout=3m'])
    steps.line(`deployment ${ns}/${deployment} available`)
  }
  const hookIP = kubectl(cluster, [
    ...['-n', 'metacontroller', 'get', 'service', 'podservice-hook'],
    ...['-o', 'jsonpath={.spec.clusterIP}'],
  ])
  steps.line(
    `hook Service podservice-hook.metacontroller = ${hookIP} (the engine calls it by that name: cluster DNS)`
  )
  steps.done()
  return hookIP
}

async function installEngine(steps: Steps, cluster: RealNodeCluster): Promise<void> {
  steps.start('Install the engine with its Helm chart (2 replicas, leader election, in-cluster)')
  const args = [
    ...['install', 'metacontroller', 'deploy/helm/metacontroller-ts'],
    ...['--namespace', 'metacontroller', '--kubeconfig', cluster.kubeconfigPath],
    ...['--set', 'rbac.podServiceExample=true'],
    ...['--wait', '--timeout', '3m'],
  ]
  steps.line(
    `helm ${args.filter((a) => a !== cluster.kubeconfigPath && a !== '--kubeconfig').join(' ')}`
  )
  run(HELM, args)
  const table = kubectl(cluster, [
    ...['-n', 'metacontroller', 'get', 'pods', '-l', 'app.kubernetes.io/name=metacontroller-ts'],
    ...[
      '-o',
      'custom-columns=ENGINE POD:.metadata.name,STATUS:.status.phase,IMAGE:.spec.containers[0].image',
    ],
  ])
  for (const line of table.split('\n')) steps.line(line)
  const lease = await waitFor(
    async () => {
      const l = await cluster.client.get<KubeObject & { spec?: { holderIdentity?: string } }>(
        LEASES,
        'metacontroller',
        { namespace: 'metacontroller' }
      )
      return l.spec?.holderIdentity
    },
    { timeoutMs: 60_000, intervalMs: 200, description: 'a leader' }
  )
  steps.line(`leader: ${lease.split('_')[0] ?? lease}`)
  steps.line('kubectl apply -f examples/podservice/controller-in-cluster.yaml')
  kubectl(cluster, ['apply', '-f', 'examples/podservice/controller-in-cluster.yaml'])
  steps.done()
}

/** The PodService of the walkthrough: the busybox web server, behind an Ingress. */
function podService(image: string): PodService {
  return {
    apiVersion: 'homelabz.com.br/v1',
    kind: 'PodService',
    metadata: { name: NAME, namespace: NAMESPACE },
    spec: { image, port: 8080, ingress: { host: HOST } },
  }
}

// Waits for the Pod (other than `previousUid`) to run a container; returns it.
async function runningPod(cluster: RealNodeCluster, previousUid?: string): Promise<Pod> {
  return waitFor(
    async () => {
      try {
        const pod = await cluster.client.get<Pod>(PODS, NAME, { namespace: NAMESPACE })
        const id = pod.status?.containerStatuses?.[0]?.containerID
        const running = pod.status?.containerStatuses?.[0]?.state?.running !== undefined
        if (pod.metadata.uid === previousUid || id === undefined || !running) return undefined
        return pod
      } catch (error) {
        if (error instanceof NotFoundError) return undefined
        throw error
      }
    },
    { timeoutMs: 120_000, intervalMs: 100, description: `Pod ${NAME} running a container` }
  )
}

function describePod(steps: Steps, pod: Pod): void {
  const status = pod.status?.containerStatuses?.[0]
  steps.line(
    `Pod ${pod.metadata.name} (uid ${pod.metadata.uid?.slice(0, 8)}) ${pod.status?.phase} on ${pod.spec?.nodeName}, IP ${pod.status?.podIP}`
  )
  steps.line(`image ${status?.image}, containerID ${status?.containerID}`)
}

// curl through the ingress until the page shows `expected` (Traefik picks routes up in ~1 s).
async function curlPage(steps: Steps, hostPort: number, expected: string): Promise<void> {
  const url = `http://127.0.0.1:${hostPort}/`
  steps.line(`$ curl -i -H 'Host: ${HOST}' ${url}`)
  const response = await waitFor(
    () => {
      try {
        const text = run('curl', ['-i', '-sS', '--max-time', '5', '-H', `Host: ${HOST}`, url])
        return text.includes(expected) ? text : undefined
      } catch {
        return undefined
      }
    },
    {
      timeoutMs: 60_000,
      intervalMs: 250,
      description: `the page of ${expected} through the ingress`,
    }
  )
  for (const line of response.replace(/\r/g, '').trim().split('\n')) {
    steps.line(line === '' ? '' : `  ${line}`)
  }
}

// The container IDs containerd holds in the CRI's namespace (what the kubelet's IDs name).
function containerdIds(cluster: RealNodeCluster): string[] {
  const ctr = join(defaultNodeBinDir(), 'ctr')
  const socket = realNodeLayout(cluster.dir).containerdSocket
  return run(ctr, ['--address', socket, '-n', 'k8s.io', 'containers', 'ls', '-q'])
    .split('\n')
    .filter((l) => l !== '')
}

async function createPodService(
  steps: Steps,
  cluster: RealNodeCluster,
  port: number
): Promise<Pod> {
  steps.start(`Create PodService ${NAMESPACE}/${NAME} (image metactl.local/web:1, Ingress ${HOST})`)
  kubectl(cluster, ['create', 'namespace', NAMESPACE])
  await cluster.client.create(PODSERVICES, podService('metactl.local/web:1'), {
    namespace: NAMESPACE,
  })
  const pod = await runningPod(cluster)
  describePod(steps, pod)
  await curlPage(steps, port, `Hello from ${NAME}</h1>`)
  steps.done()
  return pod
}

async function changeImage(
  steps: Steps,
  cluster: RealNodeCluster,
  port: number,
  old: Pod
): Promise<Pod> {
  steps.start('Change spec.image to metactl.local/web:2: Recreate replaces the Pod')
  await cluster.client.patch(
    PODSERVICES,
    NAME,
    { spec: { image: 'metactl.local/web:2' } },
    { namespace: NAMESPACE, type: 'merge' }
  )
  const pod = await runningPod(cluster, old.metadata.uid)
  describePod(steps, pod)
  const before = old.status?.containerStatuses?.[0]?.containerID
  const after = pod.status?.containerStatuses?.[0]?.containerID
  if (before === after) throw new Error(`the container did not change: ${after}`)
  steps.line(`new container: ${before} -> ${after}`)
  await curlPage(steps, port, `Hello from ${NAME} (web:2)</h1>`)
  steps.done()
  return pod
}

async function deletePodService(steps: Steps, cluster: RealNodeCluster, pod: Pod): Promise<void> {
  steps.start(`Delete PodService ${NAMESPACE}/${NAME}: its Pod and container go`)
  const id = (pod.status?.containerStatuses?.[0]?.containerID ?? '').replace('containerd://', '')
  await cluster.client.delete(PODSERVICES, NAME, { namespace: NAMESPACE })
  await waitFor(
    async () => {
      try {
        await cluster.client.get(PODS, NAME, { namespace: NAMESPACE })
        return false
      } catch (error) {
        if (error instanceof NotFoundError) return true
        throw error
      }
    },
    { timeoutMs: 120_000, intervalMs: 100, description: `Pod ${NAME} deleted` }
  )
  steps.line(`Pod ${NAME} deleted`)
  await waitFor(() => !containerdIds(cluster).includes(id), {
    timeoutMs: 60_000,
    intervalMs: 200,
    description: `container ${id} removed`,
  })
  steps.line(`container containerd://${id} gone from containerd`)
  steps.done()
}

async function main(world: { cluster?: RealNodeCluster }): Promise<void> {
  const steps = new Steps(7)
  out('PodService walkthrough on a real node: containers run, the engine runs in-cluster,')
  out('an ingress controller (Traefik) serves the PodService on 127.0.0.1.')
  const port = hostPortOption() ?? (await findFreePort())
  const images = buildImages(steps)
  const cluster = await startCluster(steps, images, port)
  world.cluster = cluster
  installIngressAndHook(steps, cluster)
  await installEngine(steps, cluster)
  const first = await createPodService(steps, cluster, port)
  const second = await changeImage(steps, cluster, port, first)
  await deletePodService(steps, cluster, second)
  out(`\nWalkthrough done in ${steps.elapsed}.`)
}

const world: { cluster?: RealNodeCluster } = {}
let failed = false
try {
  await main(world)
} catch (error) {
  failed = true
  process.stderr.write(
    `\ndemo-real failed: ${error instanceof Error ? error.message : String(error)}\n`
  )
} finally {
  if (world.cluster !== undefined) {
    const started = Date.now()
    const teardown = await world.cluster.stop()
    out(
      `Cluster stopped in ${((Date.now() - started) / 1000).toFixed(1)} s (${teardown.stopped.length} processes, ${teardown.killed} left-over container processes killed${teardown.leftovers.length === 0 ? '' : `; left: ${teardown.leftovers.join(', ')}`}).`
    )
  }
}
process.exit(failed ? 1 : 0)
