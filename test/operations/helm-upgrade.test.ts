// The in-cluster engine upgraded and rolled back under load on a real node (issue 35, point 2):
// the previous release (PREVIOUS_COMMIT's chart and engine image, test/support/
// upgrade-previous-release.ts) installed by helm with 2 replicas and the chart's
// PodDisruptionBudget, 300 parents of a CompositeController whose hook runs in-cluster, then,
// while parents are created, updated and deleted, `helm upgrade` to the checkout's chart and
// image and `helm rollback` to the previous one; once with leader election, once sharded. After
// each rollout every live parent converges (children as its spec asks, status observedGeneration
// current) and deleted parents' children are gone; the API server's audit log shows no parent or
// child written by two replicas without a handover in between (the new leader's acquireTime, or
// the new ring the writer agreed on); never fewer ready engine Pods than the PDB's minAvailable;
// the leadership handover times are printed. Root, `make node`, `make helm`. Figures in
// docs/operations.md, "Upgrades and rollbacks".
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { execFileSync } from 'node:child_process'
import { startRealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import type { RealNodeCluster } from '../../src/cluster/real-node/start-real-node-cluster.js'
import { DynamicClient } from '../../src/kube/dynamic-client.js'
import { KubeTransport } from '../../src/kube/kube-transport.js'
import { HELM_SKIP } from '../support/helm-binary.js'
import {
  currentRelease,
  ENGINE_REPOSITORY,
  previousRelease,
} from '../support/upgrade-previous-release.js'
import type { EngineRelease } from '../support/upgrade-previous-release.js'
import { runUpgradeScenario } from '../support/upgrade-scenario.js'
import type { ScenarioFigures, ScenarioSetup } from '../support/upgrade-scenario.js'
import { installChurnController } from '../support/upgrade-workload.js'

const REPO = resolve(import.meta.dirname, '..', '..')
const PARENTS = 300
const WRITES_PER_SECOND = 10
const MIN_AVAILABLE = 1

const seconds = (ms: number): string => (ms / 1000).toFixed(1)

function report(mode: string, f: ScenarioFigures): void {
  const handovers = f.handovers.map((h) => `${seconds(h.handoverMs)} s`).join(', ')
  console.log(
    `  ${mode}: seeded ${String(PARENTS)} parents converged in ${seconds(f.seedConvergeMs)} s; ` +
      `upgrade rollout ${seconds(f.upgrade.rolloutMs)} s, converged ${seconds(f.upgrade.convergeMs)} s after; ` +
      `rollback rollout ${seconds(f.rollback.rolloutMs)} s, converged ${seconds(f.rollback.convergeMs)} s after; ` +
      `handovers [${handovers}]; churn ${JSON.stringify(f.churn)}; ` +
      `${String(f.writes)} engine writes ${JSON.stringify([...f.perReplica])}; ` +
      `fewest ready ${String(f.upgrade.minReady)}/${String(f.rollback.minReady)}; ` +
      `scenario ${seconds(f.totalMs)} s`
  )
  for (const line of f.leaderShutdowns) console.log(`    ${line}`)
}

function assertScenario(f: ScenarioFigures): void {
  assert.deepEqual(
    f.doubles
      .slice(0, 5)
      .map((d) => `${d.parent}: ${d.from.replica} ${d.from.verb} -> ${d.to.replica} ${d.to.verb}`),
    [],
    `${String(f.doubles.length)} changes of writer without a handover in between`
  )
  // Every write is one engine Pod's: otherwise the two-writer check above would miss some.
  assert.equal(f.unattributed, 0, 'engine writes from an address no engine Pod had')
  assert.ok(f.writes > PARENTS, `only ${String(f.writes)} engine writes audited`)
  // Each rollout moved the writes to new Pods: at least one writer per release installed.
  assert.ok(f.perReplica.size >= 3, `writers: ${JSON.stringify([...f.perReplica])}`)
  assert.ok(f.churn.created > PARENTS && f.churn.updated > 0 && f.churn.deleted > 0)
  assert.ok(f.upgrade.minReady >= MIN_AVAILABLE, `upgrade: ${String(f.upgrade.minReady)} ready`)
  assert.ok(f.rollback.minReady >= MIN_AVAILABLE, `rollback: ${String(f.rollback.minReady)} ready`)
}

describe(
  'helm upgrade and rollback of the in-cluster engine under load',
  { timeout: 25 * 60_000 },
  () => {
    const work = mkdtempSync(join(tmpdir(), 'metactl-upgrade-'))
    const started = Date.now()
    let cluster: RealNodeCluster | undefined
    let setup: Omit<ScenarioSetup, 'mode'> | undefined
    let transport: KubeTransport | undefined

    before(async () => {
      if (HELM_SKIP !== false) return
      const previous: EngineRelease = previousRelease(REPO)
      const current: EngineRelease = currentRelease(REPO)
      const auditLog = join(work, 'audit.log')
      cluster = await startRealNodeCluster({
        dir: join(work, 'cluster'),
        images: [previous.imageArchive, current.imageArchive],
        // The previous release's CRDs, as its `helm install` would have put them.
        crds: previous.crds,
        auditLogPath: auditLog,
        featureGates: { ShardedListAndWatch: true },
      })
      // The test's own writes under a user agent of their own, apart from the engine's.
      transport = new KubeTransport(cluster.config, { userAgent: 'upgrade-churn' })
      const client = new DynamicClient(transport)
      const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
        version: string
      }
      await installChurnController(client, 'churn-hook', `${ENGINE_REPOSITORY}:${version}`)
      execFileSync(
        'kubectl',
        ['-n', 'churn-hook', 'rollout', 'status', 'deployment/churn-hook', '--timeout=3m'],
        { env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath }, stdio: 'ignore' }
      )
      setup = {
        repo: REPO,
        kubeconfig: cluster.kubeconfigPath,
        client,
        auditLog,
        previous,
        current,
        parents: PARENTS,
        writesPerSecond: WRITES_PER_SECOND,
        log: (line) => {
          console.log(`  ${line}`)
        },
      }
      console.log(`  cluster, images and hook ready in ${seconds(Date.now() - started)} s`)
    })

    after(async () => {
      // Its pooled connections would keep the test's process alive.
      await transport?.close()
      await cluster?.stop()
      rmSync(work, { recursive: true, force: true })
      console.log(`  whole file: ${seconds(Date.now() - started)} s`)
    })

    it(
      'with leader election: parents converge, one writer at a time, the PDB kept, handovers timed',
      { skip: HELM_SKIP },
      async () => {
        assert.ok(setup, 'the cluster started')
        const figures = await runUpgradeScenario({ ...setup, mode: 'leader' })
        report('leader election', figures)
        assertScenario(figures)
        // Each rollout replaces the leader's Pod: at least one handover each, timed.
        assert.ok(figures.handovers.length >= 2, `handovers: ${JSON.stringify(figures.handovers)}`)
      }
    )

    it(
      'sharded: parents converge, no child written by two replicas without a ring in between',
      { skip: HELM_SKIP },
      async () => {
        assert.ok(setup, 'the cluster started')
        const figures = await runUpgradeScenario({ ...setup, mode: 'sharded' })
        report('sharded', figures)
        assertScenario(figures)
      }
    )
  }
)
