// A world for sharding tests on a control plane of their own: an audit log, a CompositeController
// whose parents each get one child at the parent's `spec.v`, and `metactl run --sharding`
// replicas spawned as processes, with helpers to roll out, wait for convergence and the ring, and
// prove from the audit log that no parent had two writers.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, connect } from 'node:net'
import type { Server, Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import type { KubeObject } from '../../src/core/kube-object.js'
import { isJsonObject } from '../../src/core/kube-object.js'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { doubleWriters, readAuditWrites } from './audit-writers.js'
import type { DoubleWriter } from './audit-writers.js'
import {
  CCS,
  isolatedComposite,
  METACONTROLLER_CRDS,
  NAMESPACES,
  serveHook,
} from './engine-fixture.js'
import type { ServedHook } from './engine-fixture.js'
import { spawnEngine } from './spawned-engine.js'
import type { SpawnedEngine } from './spawned-engine.js'

/** Options of {@link startShardingWorld}. */
export interface ShardingWorldOptions {
  /** The API server's `ShardedListAndWatch` feature gate. */
  readonly gate: boolean
  readonly parents: number
  /** Lease duration of the replicas, in seconds (renew deadline 3/4 of it, retry 1 s). */
  readonly leaseSeconds?: number
}

/** A log line's time in ms: zap's `ts` (epoch seconds by default), or an ISO `time`. */
function logTimeMs(line: Record<string, unknown>): number {
  const ts = line['ts']
  if (typeof ts === 'number') return ts * 1000
  return Date.parse(String(ts ?? line['time']))
}

const world = isolatedComposite('ShParent', 'ShChild')

/** The parent's or status's `v`. */
function valueOf(object: KubeObject | undefined, path: 'spec' | 'status'): unknown {
  const part = object?.[path]
  return isJsonObject(part) ? part['v'] : undefined
}

/** Starts the plane, the hook and the CompositeController; no replica runs yet. */
export async function startShardingWorld(options: ShardingWorldOptions) {
  const dir = mkdtempSync(join(tmpdir(), 'metactl-sharding-'))
  const auditLog = join(dir, 'audit.log')
  const ns = `sh-${Date.now().toString(36)}`
  const { parentCrd, childCrd } = world
  const plane: ControlPlane = await startControlPlane({
    useExistingCluster: false,
    nodes: 0,
    auditLogPath: auditLog,
    featureGates: { ShardedListAndWatch: options.gate },
    crds: [...METACONTROLLER_CRDS, parentCrd.crd, childCrd.crd],
  })
  await plane.client.create(NAMESPACES, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: ns },
  })
  const hook: ServedHook = await serveHook((body) => {
    const { parent } = body as { parent: KubeObject }
    const name = parent.metadata.name ?? ''
    return {
      status: { v: valueOf(parent, 'spec') },
      children: [
        {
          apiVersion: childCrd.apiVersion,
          kind: 'ShChild',
          metadata: { name, labels: { app: name, v: String(valueOf(parent, 'spec')) } },
        },
      ],
    }
  })
  await plane.client.create(CCS, {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name: ns },
    spec: world.ccSpec(hook.url, ns, {
      childResources: [
        {
          apiVersion: childCrd.apiVersion,
          resource: childCrd.ref.resource,
          updateStrategy: { method: 'InPlace' },
        },
      ],
    }),
  })
  const engines = new Map<string, SpawnedEngine>()
  const proxies: Server[] = []
  const lease = options.leaseSeconds ?? 8
  const timings: string[] = []
  let rolloutStarted = Date.now()

  const start = (identity: string, kubeconfig = plane.kubeconfigPath): SpawnedEngine => {
    const engine = spawnEngine(kubeconfig, [
      '--sharding',
      '--sharding-namespace',
      ns,
      '--sharding-ring',
      ns,
      '--sharding-identity',
      identity,
      // Short enough for a quick test, long enough for a loaded 2-core machine's renewals.
      '--sharding-lease-duration',
      `${lease}s`,
      '--sharding-renew-deadline',
      `${(lease * 3) / 4}s`,
      '--sharding-retry-period',
      '1s',
      '--discovery-interval',
      '2s',
    ])
    engines.set(identity, engine)
    return engine
  }

  /**
   * Starts a replica whose API connection goes through a loopback proxy; `cut()` partitions
   * it (every open connection is dropped and new ones are closed at once).
   */
  const startBehindProxy = async (identity: string) => {
    const server = plane.config.server
    const target = new URL(server)
    let partitioned = false
    const sockets = new Set<Socket>()
    const proxy = createServer((client) => {
      if (partitioned) {
        client.destroy()
        return
      }
      const upstream = connect(Number(target.port), target.hostname)
      sockets.add(client).add(upstream)
      client.pipe(upstream).pipe(client)
      const close = (): void => {
        client.destroy()
        upstream.destroy()
        sockets.delete(client)
        sockets.delete(upstream)
      }
      client.on('error', close).on('close', close)
      upstream.on('error', close).on('close', close)
    })
    proxies.push(proxy)
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    const address = proxy.address()
    if (address === null || typeof address === 'string') throw new Error('no proxy address')
    const kubeconfig = join(dir, `${identity}.kubeconfig`)
    writeFileSync(
      kubeconfig,
      readFileSync(plane.kubeconfigPath, 'utf8').replaceAll(
        server,
        `https://127.0.0.1:${address.port}`
      )
    )
    return {
      engine: start(identity, kubeconfig),
      cut: (): void => {
        partitioned = true
        for (const socket of sockets) socket.destroy()
      },
    }
  }

  /**
   * Runs `write(i)` for every parent, 25 at a time; a write that timed out on a loaded machine
   * is retried (both writes below are idempotent: a merge patch, a create that may exist).
   */
  const eachParent = async (write: (i: number) => Promise<unknown>): Promise<void> => {
    const attempt = async (i: number, left: number): Promise<unknown> =>
      write(i).catch((error: unknown) => {
        const name = error instanceof Error ? error.name : ''
        if (name === 'AlreadyExistsError') return undefined
        if (left > 0 && name === 'ConnectionError') return attempt(i, left - 1)
        throw error
      })
    for (let i = 0; i < options.parents; i += 25)
      await Promise.all(
        Array.from({ length: Math.min(25, options.parents - i) }, (_, j) => attempt(i + j, 3))
      )
  }

  /** Bumps every parent's `spec.v`: a rollout the replicas must all carry out. */
  const rollout = async (v: number): Promise<void> => {
    rolloutStarted = Date.now()
    await eachParent((i) =>
      plane.client.patch(parentCrd.ref, `p${i}`, { spec: { v } }, { namespace: ns, type: 'merge' })
    )
  }

  /** Creates the parents at v=1. */
  const createParents = async (): Promise<void> => {
    rolloutStarted = Date.now()
    await eachParent((i) =>
      plane.client.create(parentCrd.ref, world.parentObject(`p${i}`, ns, { v: 1 }))
    )
  }

  /** Every parent has status v and exactly one child, at v. */
  const converged = async (v: number): Promise<boolean> => {
    const parents = await plane.client.list(parentCrd.ref, { namespace: ns })
    const children = await plane.client.list(childCrd.ref, { namespace: ns })
    const atV = children.items.filter((c) => c.metadata.labels?.['v'] === String(v))
    return (
      parents.items.length === options.parents &&
      parents.items.every((p) => valueOf(p, 'status') === v) &&
      children.items.length === options.parents &&
      atV.length === options.parents
    )
  }

  const waitConverged = async (v: number, timeoutMs = 120_000): Promise<void> => {
    await waitFor(async () => ((await converged(v)) ? true : undefined), {
      timeoutMs,
      intervalMs: 500,
      description: `every parent converged at v=${v}`,
    })
    timings.push(`v${v}=${((Date.now() - rolloutStarted) / 1000).toFixed(1)}s`)
  }

  /** Members of the last ring a replica serves, from its log. */
  const ringOf = (engine: SpawnedEngine | undefined): string[] => {
    const served = engine?.lines.filter((l) => l['msg'] === 'serving a ring').at(-1)
    return (served?.['members'] as string[] | undefined) ?? []
  }

  const waitRing = (identities: readonly string[], timeoutMs = 60_000): Promise<true> =>
    waitFor(
      () =>
        identities.every(
          (id) => JSON.stringify(ringOf(engines.get(id))) === JSON.stringify([...identities].sort())
        ) || undefined,
      { timeoutMs, intervalMs: 100, description: `the ring ${identities.join(', ')}` }
    )

  /** The audit log's writes per replica and the changes of writer no ring agreement separates. */
  const audit = (): { perReplica: Map<string, Set<string>>; doubles: DoubleWriter[] } => {
    const agreedAt = new Map(
      [...engines].map(([id, engine]) => [
        id,
        engine.lines.filter((l) => l['msg'] === 'serving a ring').map(logTimeMs),
      ])
    )
    const writes = readAuditWrites(
      auditLog,
      ns,
      [parentCrd.ref.resource, childCrd.ref.resource],
      'metacontroller-ts/'
    )
    const perReplica = new Map<string, Set<string>>()
    for (const w of writes) {
      const parents = perReplica.get(w.replica) ?? new Set()
      parents.add(w.parent)
      perReplica.set(w.replica, parents)
    }
    return { perReplica, doubles: doubleWriters(writes, agreedAt) }
  }

  const assertOneWriter = (): Map<string, Set<string>> => {
    const { perReplica, doubles } = audit()
    assert.deepEqual(
      doubles.slice(0, 5).map((d) => `${d.parent}: ${d.from.replica} -> ${d.to.replica}`),
      [],
      `${doubles.length} changes of writer without a ring agreed in between`
    )
    return perReplica
  }

  /** A metric of a replica, summed over its series whose labels contain `labelPart`. */
  const metric = async (engine: SpawnedEngine, name: string, labelPart = ''): Promise<number> => {
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

  const stop = async (): Promise<void> => {
    const debugDir = process.env['METACTL_SHARDING_DEBUG_DIR']
    if (debugDir !== undefined)
      for (const [id, engine] of engines)
        writeFileSync(
          join(debugDir, `${id}.log`),
          engine.lines.map((l) => JSON.stringify(l)).join('\n')
        )
    for (const engine of engines.values()) engine.kill()
    await Promise.all([...engines.values()].map((e) => e.exited))
    for (const proxy of proxies) proxy.close()
    await hook.close()
    await plane.stop()
    rmSync(dir, { recursive: true, force: true })
  }

  return {
    plane,
    ns,
    auditLog,
    parentCrd,
    childCrd,
    engines,
    timings,
    start,
    startBehindProxy,
    createParents,
    rollout,
    converged,
    waitConverged,
    waitRing,
    ringOf,
    audit,
    assertOneWriter,
    metric,
    stop,
  }
}

/** A running {@link startShardingWorld}. */
export type ShardingWorld = Awaited<ReturnType<typeof startShardingWorld>>
