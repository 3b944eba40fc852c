// The in-cluster engine under what goes wrong on a real node: the engine installed by our chart
// (2 replicas, leader election), a CompositeController whose hook runs in-cluster behind its
// Service, 30 parents of 3 ConfigMaps each kept changing. Each fault, in turn, under that load
// (test/support/fault-run.ts): the leader Pod deleted, gracefully and forced; the kubelet, then
// containerd, killed and restarted; the API server restarted; the leader cut from the API server
// by netfilter rules in the cluster's namespace; the hook crash-looping. Each must end with every
// parent converged and its children as desired, one writer at a time in kube-apiserver's audit
// log, and no child created or deleted again. The figures are in docs/operations.md ("Faults in
// the cluster"). Root, `make node` and `make helm`; `make operations` runs it (about 10 min).
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { waitFor } from '../../src/runtime/clock/wait-for.js'
import { REAL_NODE_NAME } from '../../src/cluster/real-node/real-node-layout.js'
import { restartClusterComponent } from '../../src/cluster/real-node/restart-cluster-component.js'
import { ENGINE_IMAGE, startFaultCluster } from '../support/fault-cluster.js'
import type { FaultCluster } from '../support/fault-cluster.js'
import { awaitEngineReady, awaitNewLeader, enginePods, leaderPod } from '../support/fault-engine.js'
import { ParentChurn } from '../support/fault-load.js'
import {
  CONFIG_MAPS,
  ENGINE_NAMESPACE,
  FAULT_NAMESPACE,
  HOOK_NAME,
  hookManifests,
} from '../support/fault-manifests.js'
import { cutFromApiServer } from '../support/fault-netfilter.js'
import { underLoad } from '../support/fault-run.js'
import type { FaultFigures, FaultResult } from '../support/fault-run.js'

const PARENTS = 30
const CHILDREN_EACH = 3
/** How long the hook stays broken, and the leader cut beyond the takeover. */
const HOOK_DOWN_MS = 20_000
const CUT_BEYOND_TAKEOVER_MS = 3000
/** How long the kubelet, or containerd, stays dead before it is started again. */
const COMPONENT_DOWN_MS = 5000
/** The hook call's timeout (fault-manifests.ts): a call in flight when the hook dies ends by then. */
const HOOK_TIMEOUT_MS = 5000

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

describe('the in-cluster engine under faults on a real node', { timeout: 40 * 60_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-faults-'))
  const started = Date.now()
  const figures: FaultFigures[] = []
  let world: FaultCluster | undefined
  let churn: ParentChurn | undefined

  const kubectl = (...args: string[]): Promise<string> => {
    assert.ok(world, 'the cluster started')
    return world.kubectl(...args)
  }
  const run = async (name: string, fault: () => Promise<FaultResult>) => {
    assert.ok(world && churn, 'the cluster started')
    const outcome = await underLoad(name, { churn, auditLog: world.auditLog }, fault)
    figures.push(outcome.figures)
    // The next fault starts from two ready replicas again.
    await awaitEngineReady(kubectl, 2, 180_000)
    return outcome
  }
  // The kubelet answers again (through the API server's node proxy) and the Node is Ready.
  const awaitKubelet = async (): Promise<void> => {
    await waitFor(
      async () => {
        await kubectl('get', '--raw', `/api/v1/nodes/${REAL_NODE_NAME}/proxy/healthz`)
        await kubectl('wait', '--for=condition=Ready', `node/${REAL_NODE_NAME}`, '--timeout=5s')
        return true
      },
      { timeoutMs: 120_000, intervalMs: 500, description: 'the kubelet to answer again' }
    )
  }
  const containers = async (): Promise<string[]> =>
    (await enginePods(kubectl)).flatMap((p) => p.containers).sort()

  before(async () => {
    world = await startFaultCluster(work, (line) => {
      console.log(`  ${line}`)
    })
    churn = new ParentChurn(world.cluster.config, PARENTS, CHILDREN_EACH)
    await churn.createAll()
    await churn.awaitConverged(180_000)
    await awaitEngineReady(kubectl, 2, 180_000)
    console.log(`  ${PARENTS} parents converged (${Math.round((Date.now() - started) / 1000)} s)`)
  })

  after(async () => {
    await churn?.close()
    await world?.cluster.stop()
    rmSync(work, { recursive: true, force: true })
    for (const f of figures) console.log(`  FIGURE ${JSON.stringify(f)}`)
    console.log(`  all faults in ${Math.round((Date.now() - started) / 1000)} s`)
  })

  for (const force of [false, true]) {
    const how = force ? 'with --grace-period=0 --force' : 'gracefully'
    it(`leader Pod deleted ${how}: the standby takes over, every parent converges`, async () => {
      await run(`leader deleted ${how}`, async () => {
        const leader = await leaderPod(kubectl)
        assert.ok(leader, 'a replica leads')
        const at = Date.now()
        const flags = force ? ['--grace-period=0', '--force'] : []
        await kubectl('-n', ENGINE_NAMESPACE, 'delete', 'pod', leader, '--wait=false', ...flags)
        const next = await awaitNewLeader(kubectl, leader, 90_000)
        return { handoverMs: next.atMs - at }
      })
    })
  }

  for (const component of ['kubelet', 'containerd'] as const) {
    it(`${component} killed and restarted: the containers survive, every parent converges`, async () => {
      assert.ok(world)
      const dir = world.dir
      const before = await containers()
      await run(`${component} killed and restarted`, async () => {
        await restartClusterComponent(dir, component, { downMs: COMPONENT_DOWN_MS })
        await awaitKubelet()
        return { healedAtMs: Date.now() }
      })
      assert.deepEqual(await containers(), before, 'the engine containers are the same ones')
    })
  }

  it('API server restarted: the engine resumes, every parent converges', async () => {
    assert.ok(world)
    const dir = world.dir
    await run('API server restarted', async () => {
      const at = Date.now()
      const restart = await restartClusterComponent(dir, 'kube-apiserver', { signal: 'SIGTERM' })
      const stoppedAtMs = Date.now()
      await awaitApiServer(kubectl)
      const healedAtMs = Date.now()
      const seconds = (ms: number): string => (ms / 1000).toFixed(1)
      // Who writes after it (the same replica, or the other after a lost Lease) is in `writers`.
      return {
        healedAtMs,
        note:
          `stopped in ${seconds(stoppedAtMs - at)} s${restart.forced ? ' (SIGKILL)' : ''}, ` +
          `ready again ${seconds(healedAtMs - stoppedAtMs)} s later`,
      }
    })
  })

  it('leader cut from the API server past its renew deadline: the standby takes over, the cut one stops writing, then rejoins', async () => {
    assert.ok(world)
    const dir = world.dir
    let cut = { ip: '', atMs: 0, restarts: 0 }
    const { writes } = await run('leader cut from the API server', async () => {
      const leader = await leaderPod(kubectl)
      const pod = (await enginePods(kubectl)).find((p) => p.name === leader)
      assert.ok(leader !== undefined && pod !== undefined, 'the leader has an IP')
      const ip = pod.ip
      const restore = await cutFromApiServer(dir, ip)
      // Cut once the rules are in: a write the server received before that is not after it.
      cut = { ip, atMs: Date.now(), restarts: pod.restarts }
      try {
        const next = await awaitNewLeader(kubectl, leader, 90_000)
        await sleep(CUT_BEYOND_TAKEOVER_MS)
        return { handoverMs: next.atMs - cut.atMs, healedAtMs: Date.now() }
      } finally {
        await restore()
      }
    })
    const late = writes.filter((w) => w.ip === cut.ip && w.receivedMs > cut.atMs)
    assert.deepEqual(late, [], 'the cut replica wrote nothing after it was cut')
    // run() waited for two ready replicas: the cut Pod is back, as a standby.
    const back = (await enginePods(kubectl)).find((p) => p.ip === cut.ip)
    assert.ok(back?.ready, 'the cut Pod is ready again')
    console.log(
      `  the cut Pod's container restarted ${String(back.restarts - cut.restarts)} time(s)`
    )
  })

  it('hook crash-looping: children untouched while it fails, every parent converges after', async () => {
    assert.ok(world)
    const apply = world.apply
    const snapshot = async (): Promise<string> =>
      await kubectl(
        '-n',
        FAULT_NAMESPACE,
        'get',
        'configmaps',
        '-o',
        'jsonpath={.items[*].metadata.resourceVersion}'
      )
    let failing = { fromMs: 0, toMs: 0, children: '' }
    const { writes } = await run('hook crash-looping', async () => {
      await apply(hookManifests(ENGINE_IMAGE, ['node', '-e', 'process.exit(1)']))
      await awaitNoEndpoints(kubectl)
      await sleep(HOOK_TIMEOUT_MS + 1000)
      failing = { fromMs: Date.now(), toMs: 0, children: await snapshot() }
      await sleep(HOOK_DOWN_MS)
      const restarts = await kubectl(
        ...['-n', ENGINE_NAMESPACE, 'get', 'pods', '-l', `app=${HOOK_NAME}`],
        ...['-o', 'jsonpath={..restartCount}']
      )
      assert.ok(Number(restarts.trim().split(' ')[0]) >= 1, `the hook crash-loops: ${restarts}`)
      assert.equal(await snapshot(), failing.children, 'no child changed while the hook failed')
      failing = { ...failing, toMs: Date.now() }
      await apply(hookManifests(ENGINE_IMAGE))
      await kubectl(...['-n', ENGINE_NAMESPACE, 'rollout', 'status', `deployment/${HOOK_NAME}`])
      return { healedAtMs: failing.toMs }
    })
    const during = writes.filter(
      (w) =>
        w.resource === CONFIG_MAPS.resource &&
        w.receivedMs >= failing.fromMs &&
        w.receivedMs <= failing.toMs
    )
    assert.deepEqual(during, [], 'the engine wrote no child while the hook failed')
  })
})

// Until the hook's Service has no ready address: its Pod is gone and the new one crashes.
async function awaitNoEndpoints(kubectl: (...args: string[]) => Promise<string>): Promise<void> {
  const ips = (): Promise<string> =>
    kubectl(
      ...['-n', ENGINE_NAMESPACE, 'get', 'endpoints', HOOK_NAME],
      ...['-o', 'jsonpath={.subsets[*].addresses[*].ip}']
    )
  await waitFor(async () => (await ips()).trim() === '', {
    timeoutMs: 60_000,
    intervalMs: 250,
    description: 'the hook Service to lose its ready address',
  })
}

// Until kube-apiserver answers /readyz again.
async function awaitApiServer(kubectl: (...args: string[]) => Promise<string>): Promise<void> {
  await waitFor(
    async () => (await kubectl('get', '--raw', '/readyz', '--request-timeout=5s')).trim() === 'ok',
    { timeoutMs: 120_000, intervalMs: 250, description: 'the API server to be ready again' }
  )
}
