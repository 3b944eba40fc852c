// A world for sharding tests on a control plane of their own: an audit log, a CompositeController
// whose parents each get one child at the parent's `spec.v` (two rolled out one at a time, and a
// finalize hook, with `lifecycle`), and `metactl run --sharding`
// replicas spawned as processes, with helpers to roll out, wait for convergence and the ring, and
// prove from the audit log that no parent had two writers and no child was lost or duplicated.
// A failed wait keeps the replicas' logs and metrics, the audit log and the unconverged parents
// in a directory its error names.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it } from 'node:test'
import { request } from 'undici'
import type { KubeObject } from '../../src/core/kube-object.js'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { childFaults, doubleWriters, readAuditWrites } from './audit-writers.js'
import type { AuditWrite, DoubleWriter } from './audit-writers.js'
import {
  CCS,
  isolatedComposite,
  METACONTROLLER_CRDS,
  NAMESPACES,
  serveHook,
} from './engine-fixture.js'
import type { ServedHook } from './engine-fixture.js'
import { startPartitionProxy } from './partition-proxy.js'
import type { PartitionProxy } from './partition-proxy.js'
import { lastRing, valueOf, writeDiagnosis } from './sharding-diagnosis.js'
import type { WorldReplica } from './sharding-diagnosis.js'
import { spawnEngine } from './spawned-engine.js'
import type { SpawnedEngine } from './spawned-engine.js'

/** Options of {@link ShardingWorld.start}. */
export interface ShardingWorldOptions {
  /** The API server's `ShardedListAndWatch` feature gate. */
  readonly gate: boolean
  readonly parents: number
  /**
   * Lease duration of the replicas, in seconds (renew deadline 3/4 of it, retry 1 s); by
   * default the engine's own (15 s, renew deadline 10 s, retry 2 s). Shorter leases make
   * crashes quicker to recover from, but a 2-core machine loaded by a rollout of 1,000 parents
   * can delay renewals past a 6 s deadline, and a replica that cannot renew exits.
   */
  readonly leaseSeconds?: number
  /**
   * Two children per parent (`<parent>.a`, `<parent>.b`) rolled out one at a time
   * (`RollingInPlace`), and a finalize hook that lets a parent go once its children are gone.
   */
  readonly lifecycle?: boolean
}

/** A log line's time in ms: zap's `ts` (epoch seconds by default), or an ISO `time`. */
function logTimeMs(line: Record<string, unknown>): number {
  const ts = line['ts']
  if (typeof ts === 'number') return ts * 1000
  return Date.parse(String(ts ?? line['time']))
}

const composite = isolatedComposite('ShParent', 'ShChild')

/**
 * The hook: status `v` is the spec's, and one child named after the parent (with `lifecycle`:
 * `<parent>.a` and `<parent>.b`), labelled `v`. Finalizing, it asks for no children and says
 * finalized once none is observed.
 */
function childrenAtSpecV(lifecycle: boolean) {
  return (body: unknown) => {
    const { parent, finalizing, children } = body as {
      parent: KubeObject
      finalizing?: boolean
      children?: Record<string, Record<string, unknown>>
    }
    const name = parent.metadata.name ?? ''
    const status = { v: valueOf(parent, 'spec') }
    if (finalizing === true) {
      const observed = Object.values(children ?? {}).reduce((n, g) => n + Object.keys(g).length, 0)
      return { status, children: [], finalized: observed === 0 }
    }
    const names = lifecycle ? [`${name}.a`, `${name}.b`] : [name]
    const labels = { app: name, v: String(valueOf(parent, 'spec')) }
    return {
      status,
      children: names.map((child) => ({
        apiVersion: composite.childCrd.apiVersion,
        kind: 'ShChild',
        metadata: { name: child, labels },
      })),
    }
  }
}

/** A plane, a hook, a CompositeController and the replicas a test starts. */
export class ShardingWorld {
  readonly plane: ControlPlane
  readonly ns: string
  readonly auditLog: string
  readonly parentCrd = composite.parentCrd
  readonly childCrd = composite.childCrd
  /** The latest process of each identity. */
  readonly engines = new Map<string, SpawnedEngine>()
  /** Every process started, restarts included. */
  readonly replicas: WorldReplica[] = []
  /** Seconds from each rollout's first write until convergence: `v<n>=<s>s`. */
  readonly timings: string[] = []
  readonly options: ShardingWorldOptions
  readonly #dir: string
  readonly #hook: ServedHook
  readonly #proxies: PartitionProxy[] = []
  #rolloutStarted = Date.now()
  #keep = false

  private constructor(
    options: ShardingWorldOptions,
    parts: { plane: ControlPlane; hook: ServedHook; dir: string; ns: string }
  ) {
    this.options = options
    this.plane = parts.plane
    this.#hook = parts.hook
    this.#dir = parts.dir
    this.ns = parts.ns
    this.auditLog = join(parts.dir, 'audit.log')
  }

  /** Starts the plane, the hook and the CompositeController; no replica runs yet. */
  static async start(options: ShardingWorldOptions): Promise<ShardingWorld> {
    const dir = mkdtempSync(join(tmpdir(), 'metactl-sharding-'))
    const ns = `sh-${Date.now().toString(36)}`
    const { parentCrd, childCrd } = composite
    const plane = await startControlPlane({
      useExistingCluster: false,
      nodes: 0,
      auditLogPath: join(dir, 'audit.log'),
      featureGates: { ShardedListAndWatch: options.gate },
      crds: [...METACONTROLLER_CRDS, parentCrd.crd, childCrd.crd],
    })
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    })
    const lifecycle = options.lifecycle === true
    const hook = await serveHook(childrenAtSpecV(lifecycle))
    await plane.client.create(CCS, {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: ns },
      spec: composite.ccSpec(hook.url, ns, {
        childResources: [
          {
            apiVersion: childCrd.apiVersion,
            resource: childCrd.ref.resource,
            updateStrategy: { method: lifecycle ? 'RollingInPlace' : 'InPlace' },
          },
        ],
        hooks: {
          sync: { webhook: { url: hook.url } },
          ...(lifecycle ? { finalize: { webhook: { url: hook.url } } } : {}),
        },
      }),
    })
    return new ShardingWorld(options, { plane, hook, dir, ns })
  }

  /** Starts a replica (again, for an identity that ran before). */
  start(identity: string, kubeconfig = this.plane.kubeconfigPath): SpawnedEngine {
    const lease = this.options.leaseSeconds
    const durations =
      lease === undefined
        ? []
        : [
            '--sharding-lease-duration',
            `${lease}s`,
            '--sharding-renew-deadline',
            `${(lease * 3) / 4}s`,
            '--sharding-retry-period',
            '1s',
          ]
    const engine = spawnEngine(kubeconfig, [
      '--sharding',
      '--sharding-namespace',
      this.ns,
      '--sharding-ring',
      this.ns,
      '--sharding-identity',
      identity,
      ...durations,
      '--discovery-interval',
      '2s',
    ])
    const runs = this.replicas.filter((r) => r.identity === identity).length
    this.replicas.push({ identity, name: runs === 0 ? identity : `${identity}#${runs}`, engine })
    this.engines.set(identity, engine)
    return engine
  }

  /**
   * Starts a replica whose API connection goes through a loopback proxy; `cut()` partitions
   * it (every open connection is dropped and new ones are closed at once).
   */
  async startBehindProxy(identity: string): Promise<{ engine: SpawnedEngine; cut: () => void }> {
    const server = this.plane.config.server
    const proxy = await startPartitionProxy(new URL(server))
    this.#proxies.push(proxy)
    const kubeconfig = join(this.#dir, `${identity}.kubeconfig`)
    writeFileSync(
      kubeconfig,
      readFileSync(this.plane.kubeconfigPath, 'utf8').replaceAll(
        server,
        `https://127.0.0.1:${proxy.port}`
      )
    )
    return {
      engine: this.start(identity, kubeconfig),
      cut: () => {
        proxy.cut()
      },
    }
  }

  /**
   * Runs `write(i)` for every parent, 25 at a time; a write that timed out on a loaded machine
   * is retried after a second, up to 5 times (both writes below are idempotent: a merge patch, a
   * create that may exist).
   */
  async #eachParent(write: (i: number) => Promise<unknown>): Promise<void> {
    const attempt = async (i: number, left: number): Promise<unknown> =>
      write(i).catch(async (error: unknown) => {
        const name = error instanceof Error ? error.name : ''
        if (name === 'AlreadyExistsError') return undefined
        if (left === 0 || name !== 'ConnectionError') throw error
        await new Promise((resolve) => setTimeout(resolve, 1000))
        return attempt(i, left - 1)
      })
    const { parents } = this.options
    for (let i = 0; i < parents; i += 25)
      await Promise.all(
        Array.from({ length: Math.min(25, parents - i) }, (_, j) => attempt(i + j, 5))
      )
  }

  /** Bumps every parent's `spec.v`: a rollout the replicas must all carry out. */
  async rollout(v: number): Promise<void> {
    this.#rolloutStarted = Date.now()
    await this.#eachParent((i) =>
      this.plane.client.patch(
        this.parentCrd.ref,
        `p${i}`,
        { spec: { v } },
        { namespace: this.ns, type: 'merge' }
      )
    )
  }

  /** Creates the parents at v=1. */
  async createParents(): Promise<void> {
    this.#rolloutStarted = Date.now()
    await this.#eachParent((i) =>
      this.plane.client.create(
        this.parentCrd.ref,
        composite.parentObject(`p${i}`, this.ns, { v: 1 })
      )
    )
  }

  /** The parents and their children now. */
  async #objects(): Promise<{ parents: KubeObject[]; children: KubeObject[] }> {
    const namespace = this.ns
    const [parents, children] = await Promise.all([
      this.plane.client.list(this.parentCrd.ref, { namespace }),
      this.plane.client.list(this.childCrd.ref, { namespace }),
    ])
    return { parents: parents.items, children: children.items }
  }

  /** Children per parent: two with `lifecycle`, else one. */
  get childrenPerParent(): number {
    return this.options.lifecycle === true ? 2 : 1
  }

  /** Every parent has status v and exactly its children, at v. */
  async converged(v: number): Promise<boolean> {
    const { parents, children } = await this.#objects()
    const count = this.options.parents
    const atV = children.filter((c) => c.metadata.labels?.['v'] === String(v))
    const want = count * this.childrenPerParent
    return (
      parents.length === count &&
      parents.every((p) => valueOf(p, 'status') === v) &&
      children.length === want &&
      atV.length === want
    )
  }

  /** Deletes every parent (each waits for its finalize hook with `lifecycle`). */
  async deleteParents(): Promise<void> {
    this.#rolloutStarted = Date.now()
    await this.#eachParent((i) =>
      this.plane.client.delete(this.parentCrd.ref, `p${i}`, { namespace: this.ns })
    )
  }

  /** Waits until no parent and no child is left. */
  async waitGone(timeoutMs = this.#defaultTimeoutMs()): Promise<void> {
    await this.diagnosed(() =>
      waitFor(
        async () => {
          const { parents, children } = await this.#objects()
          return parents.length === 0 && children.length === 0 ? true : undefined
        },
        { timeoutMs, intervalMs: 1000, description: 'every parent and child gone' }
      )
    )
    this.timings.push(`deleted=${((Date.now() - this.#rolloutStarted) / 1000).toFixed(1)}s`)
  }

  /** The parents whose finalize hook was called. */
  finalized(): Set<string> {
    const names = this.#hook.requests.flatMap((body) => {
      const { parent, finalizing } = body as { parent?: KubeObject; finalizing?: boolean }
      return finalizing === true && parent?.metadata.name !== undefined
        ? [parent.metadata.name]
        : []
    })
    return new Set(names)
  }

  /**
   * Waits until every parent converged at v (by default 120 s, plus 150 ms per parent beyond
   * 100 for a loaded machine) and records how long it took since the rollout began.
   */
  async waitConverged(v: number, timeoutMs = this.#defaultTimeoutMs()): Promise<void> {
    await this.diagnosed(
      () =>
        waitFor(async () => ((await this.converged(v)) ? true : undefined), {
          timeoutMs,
          intervalMs: 1000,
          description: `every parent converged at v=${v}`,
        }),
      v
    )
    this.timings.push(`v${v}=${((Date.now() - this.#rolloutStarted) / 1000).toFixed(1)}s`)
  }

  #defaultTimeoutMs(): number {
    return 120_000 + Math.max(0, this.options.parents - 100) * 150
  }

  /** Waits for a replica's latest process to exit (60 s at most) and says how it ended. */
  exitOf(identity: string): Promise<number | string> {
    const engine = this.engines.get(identity)
    return this.diagnosed(() =>
      waitFor(() => engine?.exited, { timeoutMs: 60_000, description: `${identity}’s exit` })
    )
  }

  /** Sends a replica SIGTERM (it drains and releases its share) and says how it ended. */
  leave(identity: string): Promise<number | string> {
    this.engines.get(identity)?.process.kill('SIGTERM')
    return this.exitOf(identity)
  }

  /** Members of the last ring a replica serves, from its log. */
  ringOf(engine: SpawnedEngine | undefined): string[] {
    return lastRing(engine)
  }

  /** Waits until each of `identities` serves the ring of exactly them. */
  async waitRing(identities: readonly string[], timeoutMs = 60_000): Promise<void> {
    const want = JSON.stringify([...identities].sort())
    await this.diagnosed(() =>
      waitFor(
        () =>
          identities.every((id) => JSON.stringify(lastRing(this.engines.get(id))) === want) ||
          undefined,
        { timeoutMs, intervalMs: 100, description: `the ring ${identities.join(', ')}` }
      )
    )
  }

  /** The engines' audited writes to parents and children. */
  writes(): AuditWrite[] {
    return readAuditWrites(
      this.auditLog,
      this.ns,
      [this.parentCrd.ref.resource, this.childCrd.ref.resource],
      'metacontroller-ts/'
    )
  }

  /** The audit log's writes per replica and the changes of writer no ring agreement separates. */
  audit(): { perReplica: Map<string, Set<string>>; doubles: DoubleWriter[] } {
    const agreedAt = new Map<string, number[]>()
    for (const { identity, engine } of this.replicas) {
      const served = engine.lines.filter((l) => l['msg'] === 'serving a ring').map(logTimeMs)
      agreedAt.set(identity, [...(agreedAt.get(identity) ?? []), ...served])
    }
    const writes = this.writes()
    const perReplica = new Map<string, Set<string>>()
    for (const w of writes) {
      const parents = perReplica.get(w.replica) ?? new Set()
      parents.add(w.parent)
      perReplica.set(w.replica, parents)
    }
    return { perReplica, doubles: doubleWriters(writes, agreedAt) }
  }

  /** Asserts 0 double writers; returns the parents each replica wrote. */
  assertOneWriter(): Map<string, Set<string>> {
    const { perReplica, doubles } = this.audit()
    assert.deepEqual(
      doubles.slice(0, 5).map((d) => `${d.parent}: ${d.from.replica} -> ${d.to.replica}`),
      [],
      `${doubles.length} changes of writer without a ring agreed in between`
    )
    return perReplica
  }

  /** Asserts that every parent's children were created once each and never deleted. */
  assertNoChildLostOrDuplicated(): void {
    const names = Array.from({ length: this.options.parents }, (_, i) => `p${i}`)
    const resource = this.childCrd.ref.resource
    const faults = childFaults(this.writes(), resource, names, this.childrenPerParent)
    assert.deepEqual(faults.slice(0, 5), [], `${faults.length} children lost or duplicated`)
  }

  /** A metric of a replica, summed over its series whose labels contain `labelPart`. */
  async metric(engine: SpawnedEngine, name: string, labelPart = ''): Promise<number> {
    const address = (await engine.line('serving metrics'))['address'] as string
    const response = await request(`http://${address}/metrics`)
    const text = await response.body.text()
    let sum = 0
    for (const line of text.split('\n')) {
      if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
      if (!line.includes(labelPart)) continue
      sum += Number(line.slice(line.lastIndexOf(' ') + 1))
    }
    return sum
  }

  /**
   * Runs `body`; when it throws, keeps the replicas' logs and metrics, the audit log and the
   * parents not converged at `v` (if given) in the world's directory, and names it in the error.
   */
  async diagnosed<T>(body: () => Promise<T>, v?: number): Promise<T> {
    try {
      return await body()
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      if (this.#keep) throw error
      this.#keep = true
      throw new Error(`${message}\n${await this.#keepDiagnosis(v)}`, { cause: error })
    }
  }

  /**
   * Writes the diagnosis into the world's directory and says where. The logs are written even
   * when the API server cannot list the objects (a server too loaded to answer).
   */
  async #keepDiagnosis(v: number | undefined): Promise<string> {
    const objects = await this.#objects().catch((error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error)
      return { parents: [], children: [], reason }
    })
    await writeDiagnosis(this.#dir, this.replicas, { ...objects, writes: this.writes(), v })
    const what = 'reason' in objects ? `(no parents: ${objects.reason})` : 'unconverged parents'
    return `replica logs and metrics, audit log, ${what}: ${this.#dir}`
  }

  /**
   * Ends the replicas, the proxies, the hook and the plane. The directory is kept after a
   * failure, and with METACTL_SHARDING_KEEP_LOGS=1 after a success too (its path is printed).
   */
  async stop(): Promise<void> {
    if (process.env['METACTL_SHARDING_KEEP_LOGS'] === '1' && !this.#keep) {
      await this.diagnosed(() => Promise.reject(new Error('kept on request'))).catch(
        (error: unknown) => {
          console.log(error instanceof Error ? error.message : error)
        }
      )
    }
    for (const { engine } of this.replicas) engine.kill()
    await Promise.all(this.replicas.map((r) => r.engine.exited))
    for (const proxy of this.#proxies) proxy.close()
    await this.#hook.close()
    await this.plane.stop()
    if (!this.#keep) rmSync(this.#dir, { recursive: true, force: true })
  }
}

/**
 * Declares the steps of one scenario as tests: once a step fails the later ones are skipped,
 * since the world is no longer as they expect.
 */
export function scenarioSteps(): (name: string, body: () => void | Promise<void>) => void {
  let broken = false
  return (name, body) => {
    it(name, async (t) => {
      if (broken) {
        t.skip('an earlier step failed')
        return
      }
      try {
        await body()
      } catch (error) {
        broken = true
        throw error
      }
    })
  }
}

/** Starts a {@link ShardingWorld}. */
export function startShardingWorld(options: ShardingWorldOptions): Promise<ShardingWorld> {
  return ShardingWorld.start(options)
}
