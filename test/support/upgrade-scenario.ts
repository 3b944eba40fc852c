// One upgrade scenario on a real node: the previous release installed by helm (2 replicas, leader
// election or a sharded ring, the chart's PodDisruptionBudget), 300 parents converged, then under
// continuous creates, updates and deletes `helm upgrade` to the current release and
// `helm rollback` to the previous one, each followed by the time until every parent converged.
// What it measured is returned; the test asserts on it.
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { DynamicClient } from '../../src/kube/dynamic-client.js'
import { doubleWriters } from './audit-writers.js'
import type { DoubleWriter } from './audit-writers.js'
import { HELM } from './helm-binary.js'
import { engineWrites, writesPerReplica } from './upgrade-audit.js'
import { ParentChurn, waitConverged } from './upgrade-churn.js'
import type { ChurnCounts } from './upgrade-churn.js'
import { EngineObserver } from './upgrade-observer.js'
import type { Handover } from './upgrade-observer.js'
import { logTimeMs, PodLogs } from './upgrade-pod-logs.js'
import type { LogLine } from './upgrade-pod-logs.js'
import type { EngineRelease } from './upgrade-previous-release.js'
import { CHURN_RULES, createNamespace } from './upgrade-workload.js'

const exec = promisify(execFile)

/** The release and namespace of the engine, as upstream names them. */
export const RELEASE = 'metacontroller'
/** The engine's namespace. */
export const ENGINE_NAMESPACE = 'metacontroller'
const SELECTOR = 'app.kubernetes.io/instance=metacontroller'
const CONVERGE_TIMEOUT_MS = 3 * 60_000

/** What a scenario runs on. */
export interface ScenarioSetup {
  readonly repo: string
  readonly kubeconfig: string
  readonly client: DynamicClient
  readonly auditLog: string
  readonly previous: EngineRelease
  readonly current: EngineRelease
  /** Leader election (one writer) or a sharded ring (each replica a share). */
  readonly mode: 'leader' | 'sharded'
  /** Live parents kept by the churn. */
  readonly parents: number
  /** Writes a second while the charts change. */
  readonly writesPerSecond: number
  readonly log: (line: string) => void
}

/** One rollout (upgrade or rollback): how long helm waited and the time to converge after. */
export interface RolloutFigures {
  readonly rolloutMs: number
  readonly convergeMs: number
  /** The fewest ready, non-terminating engine Pods from the rollout's start to convergence. */
  readonly minReady: number
}

/** Everything a scenario measured. */
export interface ScenarioFigures {
  readonly seedConvergeMs: number
  readonly upgrade: RolloutFigures
  readonly rollback: RolloutFigures
  readonly handovers: readonly Handover[]
  readonly churn: ChurnCounts
  readonly writes: number
  readonly unattributed: number
  readonly perReplica: ReadonlyMap<string, number>
  readonly doubles: readonly DoubleWriter[]
  /** What each replaced leader logged after it was seen terminating (`+<s> <msg>`). */
  readonly leaderShutdowns: readonly string[]
  readonly totalMs: number
}

// Each replaced leader's shutdown, from its log, timed from when its Pod was seen terminating:
// `shutting down`, the syncs it still ran (its queue drains, up to 10 s) and `stopped`.
function leaderShutdowns(observer: EngineObserver, logs: PodLogs): string[] {
  return observer.handovers().map((handover) => {
    const ended = observer.pods.get(handover.from)?.terminatingMs ?? 0
    const lines = logs.lines.get(handover.from) ?? []
    const at = (l: LogLine | undefined): string =>
      l === undefined ? '?' : `+${((logTimeMs(l) - ended) / 1000).toFixed(1)} s`
    const down = lines.find((l) => l['msg'] === 'shutting down')
    const after = down === undefined ? [] : lines.filter((l) => logTimeMs(l) > logTimeMs(down))
    const syncs = after.filter((l) => l['msg'] === 'children changed')
    return (
      `${handover.from}: shutting down ${at(down)}, ${String(syncs.length)} syncs after it ` +
      `(the last ${at(syncs.at(-1))}), stopped ${at(after.find((l) => l['msg'] === 'stopped'))}, ` +
      `new leader +${(handover.handoverMs / 1000).toFixed(1)} s`
    )
  })
}

async function run(command: string, args: readonly string[], kubeconfig: string): Promise<string> {
  try {
    const { stdout } = await exec(command, args, {
      env: { ...process.env, KUBECONFIG: kubeconfig },
      maxBuffer: 16 * 1024 * 1024,
    })
    return stdout
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string }
    throw new Error(`${command} ${args.join(' ')}: ${e.stdout ?? ''}${e.stderr ?? ''}`, {
      cause: error,
    })
  }
}

/** The helm values of a release in a mode: 2 replicas, the Churn rights, the mode's writers. */
function values(setup: ScenarioSetup, release: EngineRelease): string[] {
  const leader = setup.mode === 'leader'
  return [
    ...['--set', 'replicas=2', '--set', `leaderElection.enabled=${String(leader)}`],
    ...[
      '--set',
      `sharding.enabled=${String(!leader)}`,
      '--set',
      'podDisruptionBudget.enabled=true',
    ],
    ...['--set-json', `rbac.extraRules=${JSON.stringify(CHURN_RULES)}`],
    ...(release.imageTag === undefined ? [] : ['--set', `image.tag=${release.imageTag}`]),
    ...['--namespace', ENGINE_NAMESPACE, '--wait', '--timeout', '4m'],
  ]
}

/** Runs a helm command and resolves with its duration (ms). */
async function helm(setup: ScenarioSetup, args: readonly string[]): Promise<number> {
  const started = Date.now()
  await run(HELM, args, setup.kubeconfig)
  return Date.now() - started
}

// Under churn: runs the helm command, keeps writing 5 s more, stops, and waits for convergence.
async function rollout(
  setup: ScenarioSetup,
  churn: ParentChurn,
  observer: EngineObserver,
  namespace: string,
  args: readonly string[]
): Promise<RolloutFigures> {
  churn.start(setup.writesPerSecond)
  await new Promise((r) => setTimeout(r, 5000))
  const started = Date.now()
  const rolloutMs = await helm(setup, args)
  await new Promise((r) => setTimeout(r, 5000))
  await churn.stop()
  const convergeMs = await waitConverged(setup.client, namespace, churn, CONVERGE_TIMEOUT_MS)
  return { rolloutMs, convergeMs, minReady: observer.minReady(started, Date.now()) }
}

// Follows the logs of every engine Pod the observer has seen running, until `done`.
function followLogs(observer: EngineObserver, logs: PodLogs): () => void {
  const timer = setInterval(() => {
    for (const pod of observer.pods.values()) {
      if (pod.ip !== undefined && pod.goneMs === undefined) logs.follow(pod.name)
    }
  }, 500)
  return () => {
    clearInterval(timer)
    logs.stop()
  }
}

/**
 * Runs the scenario (see the module comment) in a namespace of its own, then uninstalls the
 * release. Assumes the Churn controller is installed (upgrade-workload.ts).
 */
export async function runUpgradeScenario(setup: ScenarioSetup): Promise<ScenarioFigures> {
  const started = Date.now()
  const namespace = `churn-${setup.mode}`
  await createNamespace(setup.client, namespace)
  const lease = setup.mode === 'leader' ? 'metacontroller' : undefined
  const observer = new EngineObserver(setup.client, ENGINE_NAMESPACE, SELECTOR, lease)
  const logs = new PodLogs(setup.kubeconfig, ENGINE_NAMESPACE)
  observer.start()
  const stopLogs = followLogs(observer, logs)
  try {
    const { previous, current } = setup
    setup.log(`${setup.mode}: helm install ${previous.name}`)
    const install = ['install', RELEASE, previous.chart, '--create-namespace']
    await helm(setup, [...install, ...values(setup, previous)])
    const churn = new ParentChurn(setup.client, namespace, setup.parents, started)
    await churn.seed()
    const seedConvergeMs = await waitConverged(setup.client, namespace, churn, CONVERGE_TIMEOUT_MS)
    setup.log(`${setup.mode}: ${String(setup.parents)} parents converged; helm upgrade`)
    // The CRDs first, as docs/deploy.md says: helm installs crds/ on the first install only.
    await run('kubectl', ['apply', '-k', join(setup.repo, 'deploy', 'crds')], setup.kubeconfig)
    const upgradeArgs = ['upgrade', RELEASE, current.chart, ...values(setup, current)]
    const upgrade = await rollout(setup, churn, observer, namespace, upgradeArgs)
    setup.log(`${setup.mode}: upgraded and converged; helm rollback`)
    // The previous chart has `rules: []` in the aggregated ClusterRole, which the aggregation
    // controller owns: server-side apply refuses it without --force-conflicts (docs/deploy.md).
    const rollbackArgs = ['rollback', RELEASE, '1', '--namespace', ENGINE_NAMESPACE]
    rollbackArgs.push('--force-conflicts', '--wait', '--timeout', '4m')
    const rollback = await rollout(setup, churn, observer, namespace, rollbackArgs)
    const audited = engineWrites(setup.auditLog, namespace, ['churns', 'configmaps'], (ip, at) =>
      observer.podAt(ip, at)
    )
    const agreedAt =
      setup.mode === 'leader' ? observer.leadershipStarts() : logs.timesOf('serving a ring')
    return {
      seedConvergeMs,
      upgrade,
      rollback,
      handovers: observer.handovers(),
      churn: churn.counts,
      writes: audited.writes.length,
      unattributed: audited.unattributed,
      perReplica: writesPerReplica(audited.writes),
      doubles: doubleWriters(audited.writes, agreedAt),
      leaderShutdowns: leaderShutdowns(observer, logs),
      totalMs: Date.now() - started,
    }
  } finally {
    stopLogs()
    await observer.stop()
    // Logged, not thrown: a failure above is the one to report.
    await uninstall(setup, namespace).catch((error: unknown) => {
      setup.log(`${setup.mode}: uninstall failed: ${String(error)}`)
    })
  }
}

/**
 * Uninstalls the release without `--wait`: kube-controller-manager's ClusterRole aggregation
 * controller, still holding the aggregated `<release>:controllers` in its cache, can apply its
 * rules after helm deleted it, which creates it again without labels (seen once in four
 * uninstalls), and `--wait` then waits for its deletion until it times out. Deleting it again
 * after the Pods are gone leaves nothing behind for the next install.
 */
async function uninstall(setup: ScenarioSetup, namespace: string): Promise<void> {
  await helm(setup, ['uninstall', RELEASE, '--namespace', ENGINE_NAMESPACE])
  const pods = ['-n', ENGINE_NAMESPACE, 'wait', '--for=delete', 'pod', '-l', SELECTOR]
  // `kubectl wait` fails when no Pod matches any more: gone either way.
  await run('kubectl', [...pods, '--timeout=2m'], setup.kubeconfig).catch(() => undefined)
  await new Promise((r) => setTimeout(r, 2000))
  const role = ['delete', 'clusterrole', `${RELEASE}:controllers`, '--ignore-not-found']
  await run('kubectl', role, setup.kubeconfig)
  // The next scenario's engine need not sync these parents again.
  await run('kubectl', ['delete', 'namespace', namespace, '--wait=false'], setup.kubeconfig)
}
