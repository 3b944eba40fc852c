// The load of the upgrade tests: parents of kind Churn created, updated and deleted continuously
// from the host, with a model of what each live parent must have (its last spec) and which
// parents were deleted, and the check that the cluster matches the model: every live parent's
// children exactly as its spec asks, owned by it, its status observedGeneration current; no
// child of a deleted parent left.
import type { KubeObject } from '../../src/core/kube-object.js'
import type { DynamicClient } from '../../src/kube/dynamic-client.js'
import { CHILD_LABEL, CHURNS, CONFIGMAPS } from './upgrade-workload.js'

/** A parent's spec: `count` children, each holding `value`. */
export interface ChurnSpec {
  readonly count: number
  readonly value: string
}

/** What the churn did, by kind of write. */
export interface ChurnCounts {
  created: number
  updated: number
  deleted: number
  /** Writes that failed (their outcome read back into the model). */
  failed: number
}

/** A small seeded generator (mulberry32), so a failing run can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Creates, updates and deletes parents in one namespace, keeping about `size` alive. */
export class ParentChurn {
  readonly live = new Map<string, ChurnSpec>()
  readonly deleted = new Set<string>()
  readonly counts: ChurnCounts = { created: 0, updated: 0, deleted: 0, failed: 0 }
  readonly #client: DynamicClient
  readonly #namespace: string
  readonly #size: number
  readonly #random: () => number
  #next = 0
  #version = 0
  #loop: Promise<void> | undefined
  #stopping = false

  constructor(client: DynamicClient, namespace: string, size: number, seed: number) {
    this.#client = client
    this.#namespace = namespace
    this.#size = size
    this.#random = random(seed)
  }

  #spec(): ChurnSpec {
    return { count: Math.floor(this.#random() * 4), value: `v${String(++this.#version)}` }
  }

  #pick(): string | undefined {
    const names = [...this.live.keys()]
    return names[Math.floor(this.#random() * names.length)]
  }

  /** Creates `size` parents, `parallel` at a time. */
  async seed(parallel = 10): Promise<void> {
    const specs = Array.from({ length: this.#size }, () => this.#spec())
    for (let i = 0; i < specs.length; i += parallel) {
      await Promise.all(specs.slice(i, i + parallel).map((spec) => this.#create(spec)))
    }
  }

  async #create(spec: ChurnSpec): Promise<void> {
    const name = `p${String(this.#next++)}`
    const parent: KubeObject = {
      apiVersion: 'example.com/v1',
      kind: 'Churn',
      metadata: { name, namespace: this.#namespace },
      spec,
    }
    await this.#write(name, async () => {
      await this.#client.create(CHURNS, parent)
      this.live.set(name, spec)
      this.counts.created++
    })
  }

  // Runs one write; on a failure its outcome is unknown, so the model is read back from the server.
  async #write(name: string, write: () => Promise<void>): Promise<void> {
    try {
      await write()
    } catch {
      this.counts.failed++
      try {
        const object = await this.#client.get(CHURNS, name, { namespace: this.#namespace })
        this.live.set(name, object['spec'] as ChurnSpec)
        this.deleted.delete(name)
      } catch {
        if (this.live.delete(name)) this.deleted.add(name)
      }
    }
  }

  // One write: mostly updates; a create when below `size`, else a delete, keeps the size.
  async #step(): Promise<void> {
    const roll = this.#random()
    const name = this.#pick()
    if (roll < 0.6 && name !== undefined) {
      const spec = this.#spec()
      await this.#write(name, async () => {
        await this.#client.patch(
          CHURNS,
          name,
          { spec },
          { type: 'merge', namespace: this.#namespace }
        )
        this.live.set(name, spec)
        this.counts.updated++
      })
    } else if (this.live.size < this.#size || name === undefined) {
      await this.#create(this.#spec())
    } else {
      await this.#write(name, async () => {
        await this.#client.delete(CHURNS, name, { namespace: this.#namespace })
        this.live.delete(name)
        this.deleted.add(name)
        this.counts.deleted++
      })
    }
  }

  /** Starts writing, one write after another, about `perSecond` a second, until {@link stop}. */
  start(perSecond: number): void {
    this.#stopping = false
    const pauseMs = 1000 / perSecond
    this.#loop = (async () => {
      while (!this.#stopping) {
        const began = Date.now()
        await this.#step()
        const left = pauseMs - (Date.now() - began)
        if (left > 0) await new Promise((r) => setTimeout(r, left))
      }
    })()
  }

  /** Stops writing; resolves once the last write is done. */
  async stop(): Promise<void> {
    this.#stopping = true
    await this.#loop
    this.#loop = undefined
  }
}

type Status = { observedGeneration?: number; children?: number } | undefined

// What is wrong with one live parent and its children, if anything.
function parentProblems(
  name: string,
  spec: ChurnSpec,
  parent: KubeObject | undefined,
  children: readonly KubeObject[]
): string[] {
  if (parent === undefined) return [`${name}: missing`]
  const problems: string[] = []
  const status = parent['status'] as Status
  const generation = parent.metadata.generation ?? 0
  if (status?.observedGeneration !== generation) {
    problems.push(
      `${name}: observedGeneration ${String(status?.observedGeneration)} != ${generation}`
    )
  }
  const want = Array.from({ length: spec.count }, (_, i) => `${name}.${String(i)}`)
  const have = children.map((c) => c.metadata.name ?? '').sort()
  if (JSON.stringify(have) !== JSON.stringify(want.sort())) {
    problems.push(`${name}: children [${have.join(' ')}], want ${String(spec.count)}`)
  }
  for (const child of children) {
    const value = (child['data'] as Record<string, string> | undefined)?.['value']
    const owner = child.metadata.ownerReferences?.[0]?.uid
    if (value !== spec.value) problems.push(`${child.metadata.name ?? ''}: value ${String(value)}`)
    if (owner !== parent.metadata.uid) problems.push(`${child.metadata.name ?? ''}: not owned`)
  }
  return problems
}

/**
 * Everything in `namespace` that differs from the churn's model: live parents not converged,
 * parents the model does not know, children of deleted parents still there.
 */
export async function unconverged(
  client: DynamicClient,
  namespace: string,
  churn: ParentChurn
): Promise<string[]> {
  const [parents, children] = await Promise.all([
    client.list(CHURNS, { namespace }),
    client.list(CONFIGMAPS, { namespace, labelSelector: `${CHILD_LABEL}=true` }),
  ])
  const byName = new Map(parents.items.map((p) => [p.metadata.name ?? '', p]))
  const byParent = new Map<string, KubeObject[]>()
  for (const child of children.items) {
    const parent = (child.metadata.name ?? '').split('.')[0] ?? ''
    byParent.set(parent, [...(byParent.get(parent) ?? []), child])
  }
  const problems: string[] = []
  for (const [name, spec] of churn.live) {
    problems.push(...parentProblems(name, spec, byName.get(name), byParent.get(name) ?? []))
  }
  for (const name of byName.keys()) {
    if (!churn.live.has(name)) problems.push(`${name}: exists, but was deleted`)
  }
  for (const name of churn.deleted) {
    const left = byParent.get(name)?.length ?? 0
    if (left > 0) problems.push(`${name}: deleted, ${String(left)} children left`)
  }
  return problems
}

/**
 * Polls {@link unconverged} each second until nothing is wrong; resolves with the time it took
 * (ms). Throws with the first problems after `timeoutMs`.
 */
export async function waitConverged(
  client: DynamicClient,
  namespace: string,
  churn: ParentChurn,
  timeoutMs: number
): Promise<number> {
  const started = Date.now()
  for (;;) {
    const problems = await unconverged(client, namespace, churn)
    if (problems.length === 0) return Date.now() - started
    if (Date.now() - started > timeoutMs) {
      throw new Error(
        `${String(problems.length)} problems after ${String(timeoutMs)} ms: ` +
          problems.slice(0, 10).join('; ')
      )
    }
    await new Promise((r) => setTimeout(r, 1000))
  }
}
