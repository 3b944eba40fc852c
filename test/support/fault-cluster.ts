// The world of the in-cluster fault tests (test/operations/*fault*.test.ts): a cluster with a real
// node and kube-apiserver's audit log, the engine installed in-cluster by our chart (2 replicas,
// leader election), the hook of fault-manifests.ts in-cluster behind its Service, and its
// CompositeController. Needs root, `make node`, `make helm` and the image builder (the engine's
// archive dockerfile-builds.test.ts leaves in .tmp/images is reused).
import { execFile } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { buildImage } from '../../src/cluster/images/image-builder.js'
import { startRealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import type { RealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import type { KubeObject } from '../../src/core/kube-object.js'
import { CHART, HELM } from './helm-binary.js'
import {
  ENGINE_NAMESPACE,
  FAULT_NAMESPACE,
  FAULT_RULES,
  HOOK_NAME,
  faultController,
  faultParentCrd,
  hookManifests,
} from './fault-manifests.js'

const exec = promisify(execFile)
const REPO = resolve(import.meta.dirname, '..', '..')
const VERSION = (
  JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }
).version
/** The chart's default image, built from the repository's Dockerfile; the hook runs it too. */
export const ENGINE_IMAGE = `ghcr.io/metacontroller-ts/metacontroller-ts:${VERSION}`
const ENGINE_ARCHIVE = join(REPO, '.tmp', 'images', 'engine-dockerfile.tar')

/** A running fault world. */
export interface FaultCluster {
  readonly cluster: RealNodeCluster
  /** The cluster's directory (its state files, logs). */
  readonly dir: string
  /** kube-apiserver's audit log. */
  readonly auditLog: string
  /** Runs kubectl on the cluster; rejects with its output on failure. */
  readonly kubectl: (...args: string[]) => Promise<string>
  /** `kubectl apply` of objects. */
  readonly apply: (objects: readonly KubeObject[]) => Promise<void>
}

async function run(command: string, args: readonly string[], timeoutMs = 5 * 60_000) {
  try {
    const { stdout } = await exec(command, [...args], {
      maxBuffer: 32 * 1024 * 1024,
      timeout: timeoutMs,
    })
    return stdout
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message?: string }
    throw new Error(
      `${command} ${args.join(' ')}: ${e.stderr ?? e.message ?? ''}${e.stdout ?? ''}`,
      {
        cause: error,
      }
    )
  }
}

/** Starts the cluster in `work` and installs everything; `progress` gets one line per step. */
export async function startFaultCluster(
  work: string,
  progress: (line: string) => void
): Promise<FaultCluster> {
  const started = Date.now()
  const step = (what: string): void => {
    progress(`${what} (${Math.round((Date.now() - started) / 1000)} s)`)
  }
  if (!existsSync(ENGINE_ARCHIVE)) {
    await buildImage({ context: REPO, tag: ENGINE_IMAGE, output: ENGINE_ARCHIVE })
    step('engine image built')
  }
  const auditLog = join(work, 'audit.log')
  const cluster = await startRealNodeCluster({
    dir: join(work, 'cluster'),
    images: [ENGINE_ARCHIVE],
    auditLogPath: auditLog,
  })
  const kubectl = (...args: string[]): Promise<string> =>
    run('kubectl', ['--kubeconfig', cluster.kubeconfigPath, ...args])
  let applied = 0
  const apply = async (objects: readonly KubeObject[]): Promise<void> => {
    const file = join(work, `apply-${++applied}.json`)
    writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }))
    await kubectl('apply', '-f', file)
  }
  const world: FaultCluster = { cluster, dir: cluster.dir, auditLog, kubectl, apply }
  try {
    step('cluster up')
    await installWorld(world)
    step('engine, hook and controller installed')
    return world
  } catch (error) {
    await cluster.stop()
    throw error
  }
}

// The namespace and CRD, the chart's engine (2 replicas, leader election), the hook, the controller.
async function installWorld(world: FaultCluster): Promise<void> {
  const { kubectl, apply } = world
  await apply([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: FAULT_NAMESPACE } },
    faultParentCrd(),
  ])
  await kubectl('wait', '--for=condition=Established', 'crd/faultparents.example.com')
  await run(HELM, [
    ...['install', 'metacontroller', join(REPO, CHART)],
    ...['--namespace', ENGINE_NAMESPACE, '--create-namespace'],
    ...['--kubeconfig', world.cluster.kubeconfigPath],
    ...['--set', 'replicas=2', '--set', 'leaderElection.enabled=true'],
    ...['--set-json', `rbac.extraRules=${JSON.stringify(FAULT_RULES)}`],
    ...['--wait', '--timeout', '5m'],
  ])
  await apply(hookManifests(ENGINE_IMAGE))
  await kubectl(
    ...['-n', ENGINE_NAMESPACE, 'rollout', 'status', `deployment/${HOOK_NAME}`, '--timeout=3m']
  )
  await apply([faultController()])
}
