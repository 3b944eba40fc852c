// Sharding at scale: N parents × 2 ConfigMap children served by 1, 2 or 3 `metactl run --sharding`
// replicas (the compiled engine), with server-side sharded watches on (`--sharding-server-side`,
// API server gate ShardedListAndWatch on) and off (every replica caches everything, filters
// here). Each round gets a fresh control plane; the parents are spread over N/50 namespaces with
// random names and sharded by namespace (`--shard-key=namespace`), so a parent's children are
// sharded with it. Reported per round: time from the replicas' spawn until every parent is synced
// and all 2N children exist (seen on a watch of both, checked every 250 ms); per replica CPU, peak RSS, API writes, objects and bytes received
// and objects held by its sharded informers (parents, ConfigMaps); then two rebalances:
//  - scale-up R → R+1: one more replica joins the converged ring; from its spawn until it serves
//    the new ring, then until a probe parent created in a namespace it gains is synced (only the
//    newcomer may sync it by then), how many parents the new ring moved and how many bytes the
//    newcomer received; then until every replica's work queue is empty again;
//  - SIGKILL R+1 → R: the newcomer is SIGKILLed and a probe parent is created at once in a
//    namespace it owned; from the kill until that parent is synced (its Lease must expire first).
// Lease 30 s, renew deadline 25 s, retry 5 s. Also the CPU the API server, etcd and the webhook
// (this process) used until convergence. BENCH_REBALANCE=0 skips the rebalances;
// BENCH_SHARD_KEY=uid (with it) shards by uid instead, BENCH_NAMESPACES=<n> sets the namespaces.
//
//   [BENCH_LARGE=1] nice node --import tsx bench/sharding-scale.ts [parents=1000] [replicas=1,2,3] \
//     [server,client]
//
// Sizes above 3,000 (10,000 is the one the issue asks for) are opt-in with BENCH_LARGE=1.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { COMPOSITE_CONTROLLERS } from '../src/kube/well-known-resources.js'
import { startControlPlane, waitFor } from '../src/testing/index.js'
import { Informer, stripManagedFields } from '../src/runtime/informers/informer.js'
import { dynamicListWatcher } from '../src/runtime/informers/list-watcher.js'
import type { ListWatchScope } from '../src/runtime/informers/list-watcher.js'
import type { ControlPlane } from '../src/testing/index.js'
import { CONFIGMAPS, createNamespace, mib, runBounded } from './bench-cluster.js'
import {
  PARENT_CRD,
  PARENTS,
  benchParent,
  controllerSpec,
  parentSynced,
  serveWebhook,
} from './bench-parents.js'
import {
  metric,
  namespacesOf,
  parentsMoved,
  probeSynced,
  queuesIdle,
  seconds,
  servesRingOf,
} from './bench-sharding.js'
import { EngineProcess, ensureFreshBuild, readProc } from './engine-process-handle.js'
import { readControlPlaneState } from '../src/cluster/control-plane-state.js'

const parents = Number(process.argv[2] ?? '1000')
const replicaCounts = (process.argv[3] ?? '1,2,3').split(',').map(Number)
const modes = (process.argv[4] ?? 'server,client').split(',')
/** BENCH_REBALANCE=0 measures convergence only (repeated rounds to see the spread). */
const rebalances = process.env['BENCH_REBALANCE'] !== '0'
/** BENCH_SHARD_KEY=uid hashes parents by uid (children are then watched whole); the rebalances need `namespace`. */
const shardKey = process.env['BENCH_SHARD_KEY'] ?? 'namespace'
/** BENCH_NAMESPACES=<n> spreads the parents over n namespaces instead of one per 50 parents. */
const namespaceCount = Number(
  process.env['BENCH_NAMESPACES'] ?? Math.max(3, Math.ceil(parents / 50))
)
if (shardKey !== 'namespace' && rebalances) {
  console.error('BENCH_SHARD_KEY=uid needs BENCH_REBALANCE=0: the probes pick namespaces')
  process.exit(2)
}
if (parents > 3000 && process.env['BENCH_LARGE'] !== '1') {
  console.error('sizes above 3,000 parents need BENCH_LARGE=1')
  process.exit(2)
}
const root = process.cwd()
const logDir = mkdtempSync(join(tmpdir(), 'bench-sharding-'))
console.log(ensureFreshBuild(root))
console.log(
  `build ${buildCommit()}; logs in ${logDir}; load average at start ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`
)

/** The commit the engine was built from, marked when the work tree differs from it. */
function buildCommit(): string {
  const git = (...args: string[]): string =>
    execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim()
  const dirty = git('status', '--porcelain', '--untracked-files=no') === '' ? '' : ' (modified)'
  return `${git('rev-parse', '--short', 'HEAD')}${dirty}`
}

/** A round's cluster: the parents' namespaces with how many parents each holds. */
interface Seeded {
  readonly plane: ControlPlane
  readonly parentsPerNamespace: ReadonlyMap<string, number>
}

/**
 * Parents synced and children (ConfigMaps of the controller) in the whole cluster, read from a
 * watch. A list of both collections every 2 s (30,000 objects, about 27 MB at 10,000 parents)
 * made the API server send the bench some 20 times what the replicas received, and the figure
 * measured that load more than the replicas.
 */
class Progress {
  readonly #parents: Informer
  readonly #children: Informer

  constructor(plane: ControlPlane) {
    const watch = (ref: typeof PARENTS, scope: ListWatchScope): Informer =>
      new Informer(dynamicListWatcher(plane.client, ref, scope), { transform: stripManagedFields })
    this.#parents = watch(PARENTS, {})
    this.#children = watch(CONFIGMAPS, { labelSelector: 'controller-uid' })
  }

  async start(): Promise<void> {
    this.#parents.start()
    this.#children.start()
    await Promise.all([this.#parents.waitForSync(), this.#children.waitForSync()])
  }

  now(): { synced: number; children: number } {
    const synced = this.#parents.store.list().filter(parentSynced).length
    return { synced, children: this.#children.store.size }
  }

  async stop(): Promise<void> {
    await Promise.all([this.#parents.stop(), this.#children.stop()])
  }
}

/** A fresh control plane with the gate on, N parents over N/50 namespaces and the controller. */
async function seed(hookUrl: string): Promise<Seeded> {
  const plane = await startControlPlane({
    useExistingCluster: false,
    nodes: 0,
    featureGates: { ShardedListAndWatch: true },
    crds: [
      PARENT_CRD,
      'deploy/crds/compositecontrollers.yaml',
      'deploy/crds/decoratorcontrollers.yaml',
      'deploy/crds/controllerrevisions.yaml',
    ],
  })
  try {
    return { plane, parentsPerNamespace: await seedParents(plane, hookUrl) }
  } catch (error) {
    await plane.stop()
    throw error
  }
}

/** Creates the namespaces, the parents round-robin over them, and the controller. */
async function seedParents(plane: ControlPlane, hookUrl: string): Promise<Map<string, number>> {
  const namespaces: string[] = []
  for (let i = 0; i < namespaceCount; i++)
    namespaces.push(await createNamespace(plane.client, `bsh-${randomBytes(4).toString('hex')}`))
  const parentsPerNamespace = new Map<string, number>()
  for (let i = 0; i < parents; i++) {
    const namespace = namespaces[i % namespaceCount] ?? ''
    parentsPerNamespace.set(namespace, (parentsPerNamespace.get(namespace) ?? 0) + 1)
  }
  await runBounded(parents, 16, (i) =>
    plane.client.create(PARENTS, benchParent(`p${i}`, namespaces[i % namespaceCount] ?? '', 1))
  )
  await plane.client.create(COMPOSITE_CONTROLLERS, {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name: 'bench-sharding' },
    spec: controllerSpec(hookUrl, true),
  })
  return parentsPerNamespace
}

/** Starts replica `id` of the ring; its log goes to a file named after the round. */
function startReplica(plane: ControlPlane, id: string, round: string): Promise<EngineProcess> {
  const mode = round.split('-')[0]
  return EngineProcess.start({
    root,
    kubeconfig: plane.kubeconfigPath,
    logFile: join(logDir, `${round}-${id}.log`),
    args: [
      '--sharding',
      '--sharding-namespace=default',
      '--sharding-ring=bench',
      `--sharding-identity=${id}`,
      `--shard-key=${shardKey}`,
      `--sharding-server-side=${mode === 'server' ? 'true' : 'false'}`,
      // Longer than the defaults: a loaded 2-core machine listing 10,000 parents must not make
      // a replica miss its renewals (each try may take 2 retry periods).
      '--sharding-lease-duration=30s',
      '--sharding-renew-deadline=25s',
      '--sharding-retry-period=5s',
    ],
  })
}

/** How long nothing may move, every queue empty, before a round is called stuck. */
const STALL_MS = 120_000

/**
 * Resolves with "" once every parent is synced and all 2N children exist, or with what was
 * synced once nothing moved for {@link STALL_MS} while every replica's work queue was empty (the
 * remaining parents were dropped and nothing will enqueue them again).
 */
async function converged(progress: Progress, engines: readonly EngineProcess[]): Promise<string> {
  let last = { synced: -1, atMs: performance.now() }
  return await waitFor(
    async () => {
      const p = progress.now()
      if (p.synced >= parents && p.children >= 2 * parents) return ''
      if (p.synced !== last.synced) last = { synced: p.synced, atMs: performance.now() }
      if (performance.now() - last.atMs < STALL_MS) return undefined
      const depths = await Promise.all(engines.map((e) => metric(e, 'workqueue_depth')))
      if (depths.some((d) => d > 0)) return undefined
      const dropped = await Promise.all(
        engines.map((e) => metric(e, 'metacontroller_shard_parents_dropped_total'))
      )
      return `stuck at ${p.synced} of ${parents} synced (queues empty; parents dropped ${dropped.join(' / ')})`
    },
    { timeoutMs: 3_600_000, intervalMs: 250, description: 'every parent synced' }
  )
}

/** What one replica used and received until convergence. */
interface ReplicaFigures {
  readonly id: string
  readonly cpuS: number
  readonly peakRssMiB: number
  readonly writes: number
  readonly heldParents: number
  readonly heldChildren: number
  readonly received: number
  readonly receivedBytes: number
}

/** Reads a replica's figures from /proc and its metrics. */
async function figuresOf(engine: EngineProcess, id: string): Promise<ReplicaFigures> {
  const sample = engine.sample()
  return {
    id,
    cpuS: sample.cpuMs / 1000,
    peakRssMiB: sample.peakRssBytes / 2 ** 20,
    writes: (await engine.requests()).writes,
    heldParents: await metric(engine, 'metacontroller_shard_cached_objects', 'benchparents'),
    heldChildren: await metric(engine, 'metacontroller_shard_cached_objects', 'configmaps'),
    received: await metric(engine, 'metacontroller_shard_received_objects_total'),
    receivedBytes: await metric(engine, 'metacontroller_shard_received_bytes_total'),
  }
}

/** The per-replica cells of the table. */
function figureCells(figures: readonly ReplicaFigures[]): string[] {
  const each = (cell: (f: ReplicaFigures) => string): string => figures.map(cell).join(' / ')
  const share = (f: ReplicaFigures): string =>
    `${f.id} ${((100 * f.heldParents) / parents).toFixed(0)} % / ${((100 * f.heldChildren) / (2 * parents)).toFixed(0)} %`
  return [
    each((f) => f.cpuS.toFixed(1)),
    each((f) => f.peakRssMiB.toFixed(1)),
    each((f) => String(f.writes)),
    each((f) => String(f.received)),
    each((f) => mib(f.receivedBytes)),
    figures.map(share).join(', '),
  ]
}

/**
 * Starts one more replica on a converged ring of `ids`: seconds from its spawn until it serves
 * the new ring and until a probe parent in a namespace it gains is synced; the parents moved;
 * seconds until every queue is empty again; the bytes the newcomer received by then. Leaves the
 * newcomer running, last in `engines` and `ids`.
 */
async function rebalanceAfterScaleUp(
  seeded: Seeded,
  engines: EngineProcess[],
  ids: string[],
  round: string
): Promise<string> {
  const newcomer = `r${ids.length + 1}`
  const grown = [...ids, newcomer]
  const gained = namespacesOf(seeded.parentsPerNamespace.keys(), grown, newcomer)
  const moved = parentsMoved(seeded.parentsPerNamespace, ids, grown)
  const spawned = performance.now()
  const joined = await startReplica(seeded.plane, newcomer, round)
  engines.push(joined)
  ids.push(newcomer)
  await servesRingOf(joined, grown.length)
  const servingMs = performance.now() - spawned
  const probe = gained[0]
  const probeMs =
    probe === undefined ? undefined : await probeSynced(seeded.plane, 'probe-join', probe, spawned)
  await queuesIdle(engines)
  const idleMs = performance.now() - spawned
  const receivedBytes = await metric(joined, 'metacontroller_shard_received_bytes_total')
  const movedShare = `${moved} parents (${((100 * moved) / parents).toFixed(0)} %)`
  const probeCell = probeMs === undefined ? 'no namespace gained' : seconds(probeMs)
  return `${ids.length - 1} → ${ids.length}: serving ${seconds(servingMs)}, probe ${probeCell}, idle ${seconds(idleMs)}; ${movedShare} moved, ${mib(receivedBytes)} MiB received by ${newcomer}`
}

/**
 * SIGKILLs the last replica, creates a parent in a namespace it owned at once, and times until
 * that parent is synced (its Lease must expire first: 30 s here).
 */
async function rebalanceAfterKill(
  seeded: Seeded,
  engines: EngineProcess[],
  ids: readonly string[]
): Promise<string> {
  const victim = ids.at(-1) ?? ''
  const owned = namespacesOf(seeded.parentsPerNamespace.keys(), ids, victim)[0]
  if (owned === undefined) return 'no namespace of the victim'
  const killed = performance.now()
  engines.at(-1)?.signal('SIGKILL')
  const probeMs = await probeSynced(seeded.plane, 'probe-kill', owned, killed)
  return `${ids.length} → ${ids.length - 1}: ${seconds(probeMs)}`
}

/** CPU seconds used so far by the plane's API server and etcd, and by this process (the webhook). */
interface PlaneCpu {
  readonly apiServerS: number
  readonly etcdS: number
  readonly webhookS: number
}

function planeCpu(plane: ControlPlane): PlaneCpu {
  const processes = readControlPlaneState(plane.dir)?.processes ?? []
  const cpuS = (name: string): number => {
    const pid = processes.find((p) => p.name === name)?.pid
    return pid === undefined ? Number.NaN : (readProc(pid)?.cpuMs ?? Number.NaN) / 1000
  }
  const own = process.cpuUsage()
  return {
    apiServerS: cpuS('kube-apiserver'),
    etcdS: cpuS('etcd'),
    webhookS: (own.user + own.system) / 1e6,
  }
}

function planeCpuCell(before: PlaneCpu, after: PlaneCpu): string {
  const spent = (key: keyof PlaneCpu): string => (after[key] - before[key]).toFixed(1)
  return `${spent('apiServerS')} / ${spent('etcdS')} / ${spent('webhookS')}`
}

/** One round: a fresh plane, N parents, R replicas; returns the figures as table cells. */
async function round(replicas: number, mode: string): Promise<string[]> {
  const hook = await serveWebhook({ etag: true })
  const seeded = await seed(hook.url).catch(async (error: unknown) => {
    await hook.close()
    throw error
  })
  const engines: EngineProcess[] = []
  const progress = new Progress(seeded.plane)
  try {
    const load = loadavg()[0]?.toFixed(1) ?? '?'
    const ids = Array.from({ length: replicas }, (_, i) => `r${i + 1}`)
    const name = `${mode}-${replicas}`
    await progress.start()
    const planeBefore = planeCpu(seeded.plane)
    const spawned = performance.now()
    engines.push(...(await Promise.all(ids.map((id) => startReplica(seeded.plane, id, name)))))
    const stuck = await converged(progress, engines)
    const planeCell = planeCpuCell(planeBefore, planeCpu(seeded.plane))
    await progress.stop()
    const convergedMs = performance.now() - spawned
    const figures: ReplicaFigures[] = []
    for (const [i, engine] of engines.entries()) figures.push(await figuresOf(engine, ids[i] ?? ''))
    const convergedCell =
      stuck === '' ? seconds(convergedMs) : `${stuck} after ${seconds(convergedMs)}`
    console.log(`  converged: ${convergedCell}`)
    const cells = [`${replicas}, ${mode}`, load, convergedCell, planeCell, ...figureCells(figures)]
    if (!rebalances) return [...cells, '–', '–']
    const scaleUp = await rebalanceAfterScaleUp(seeded, engines, ids, name)
    console.log(`  scale-up ${scaleUp}`)
    const kill = await rebalanceAfterKill(seeded, engines, ids)
    return [...cells, scaleUp, kill]
  } finally {
    await progress.stop()
    for (const engine of engines) await engine.stop()
    await hook.close()
    await seeded.plane.stop()
  }
}

const rows: string[][] = []
for (const mode of modes)
  for (const replicas of replicaCounts) {
    console.log(`round: ${replicas} replica(s), ${mode}-side watches, ${parents} parents`)
    const started = new Date().toISOString().slice(11, 16)
    const row = await round(replicas, mode)
    console.log(`| ${row.join(' | ')} | (started ${started} UTC)`)
    rows.push(row)
  }
console.log(
  '\n| replicas, watches | load | converged | CPU s until converged: API server / etcd / webhook | CPU s per replica | peak RSS MiB per replica | writes per replica | objects received per replica | MiB received per replica | parents / children held per replica | scale-up R → R+1 (from the spawn) | SIGKILL R+1 → R |'
)
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|')
for (const row of rows) console.log(`| ${row.join(' | ')} |`)
