// The load of the in-cluster fault tests: a few dozen FaultParents (fault-manifests.ts) kept
// changing by a client of the test's own (user agent `metactl-fault-load`, so the audit log tells
// its writes from the engine's), and the check that everything converged: each parent's status
// holds its current value and its children are exactly the ConfigMaps it asks for, holding it.
import type { ClusterConfig } from '../../src/kube/cluster-config.js'
import { DynamicClient } from '../../src/kube/dynamic-client.js'
import { KubeTransport } from '../../src/kube/kube-transport.js'
import type { KubeObject } from '../../src/core/kube-object.js'
import { CONFIG_MAPS, FAULT_NAMESPACE, FAULT_PARENTS } from './fault-manifests.js'

/** The load client's user agent, as the audit log records it. */
export const LOAD_USER_AGENT = 'metactl-fault-load'

interface FaultParent extends KubeObject {
  spec?: { children?: number; value?: string }
  status?: { value?: string }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** A few dozen parents, each with `childrenEach` children, changed at random while started. */
export class ParentChurn {
  readonly names: readonly string[]
  readonly #client: DynamicClient
  readonly #transport: KubeTransport
  readonly #childrenEach: number
  /** The value last written to each parent (a failed write is retried until it lands). */
  readonly #values = new Map<string, string>()
  #running: Promise<void> | undefined
  #stopping = false
  #writes = 0

  constructor(config: ClusterConfig, count: number, childrenEach: number) {
    this.#transport = new KubeTransport(config, { timeoutMs: 10_000, userAgent: LOAD_USER_AGENT })
    this.#client = new DynamicClient(this.#transport)
    this.#childrenEach = childrenEach
    this.names = Array.from({ length: count }, (_, i) => `p-${String(i).padStart(2, '0')}`)
  }

  /** Creates every parent with value `v0`. */
  async createAll(): Promise<void> {
    for (const name of this.names) {
      await this.#client.create(FAULT_PARENTS, {
        apiVersion: 'example.com/v1',
        kind: 'FaultParent',
        metadata: { name, namespace: FAULT_NAMESPACE },
        spec: { children: this.#childrenEach, value: 'v0' },
      })
      this.#values.set(name, 'v0')
    }
  }

  /** Starts changing one parent every `intervalMs`; API errors are retried, never thrown. */
  start(intervalMs: number): void {
    if (this.#running !== undefined) throw new Error('the churn is already running')
    this.#stopping = false
    this.#running = (async () => {
      while (!this.#stopping) {
        const name = this.names[Math.floor(Math.random() * this.names.length)] ?? ''
        await this.#write(name, `v${++this.#writes}`)
        await sleep(intervalMs)
      }
    })()
  }

  /** Stops the churn once its write in flight has landed. */
  async stop(): Promise<void> {
    this.#stopping = true
    await this.#running
    this.#running = undefined
  }

  /** Parent changes written so far. */
  get writes(): number {
    return this.#writes
  }

  // A merge patch is idempotent: retried through an API server restart until it lands.
  async #write(name: string, value: string): Promise<void> {
    for (;;) {
      try {
        await this.#client.patch(
          FAULT_PARENTS,
          name,
          { spec: { value } },
          {
            type: 'merge',
            namespace: FAULT_NAMESPACE,
          }
        )
        this.#values.set(name, value)
        return
      } catch {
        await sleep(500)
      }
    }
  }

  /**
   * What is not converged (empty when everything is): a parent whose spec lost the value last
   * written, whose status lags, or whose children differ from what it asks for.
   */
  async unconverged(): Promise<string[]> {
    const parents = await this.#client.list<FaultParent>(FAULT_PARENTS, {
      namespace: FAULT_NAMESPACE,
    })
    const maps = await this.#client.list(CONFIG_MAPS, { namespace: FAULT_NAMESPACE })
    const children = new Map(
      maps.items
        .filter((m) => m.metadata.name !== 'kube-root-ca.crt')
        .map((m) => [m.metadata.name ?? '', m])
    )
    const problems: string[] = []
    for (const name of this.names) {
      const parent = parents.items.find((p) => p.metadata.name === name)
      const value = this.#values.get(name)
      if (parent?.spec?.value !== value) problems.push(`${name}: spec lost ${String(value)}`)
      if (parent?.status?.value !== value) {
        problems.push(`${name}: status ${String(parent?.status?.value)}, not ${String(value)}`)
      }
      for (let i = 0; i < this.#childrenEach; i++) {
        const child = children.get(`${name}.${i}`)
        children.delete(`${name}.${i}`)
        const owner = child?.metadata.ownerReferences?.[0]?.uid
        if (child === undefined) problems.push(`${name}.${i}: missing`)
        else if ((child['data'] as { value?: string } | undefined)?.value !== value) {
          problems.push(`${name}.${i}: holds an old value`)
        } else if (owner !== parent?.metadata.uid) problems.push(`${name}.${i}: not owned`)
      }
    }
    for (const extra of children.keys()) problems.push(`${extra}: not desired`)
    return problems
  }

  /** Resolves with the time (ms) at which everything was converged; rejects with what was not. */
  async awaitConverged(timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs
    let last: string[] = ['not checked']
    while (Date.now() < deadline) {
      try {
        last = await this.unconverged()
        if (last.length === 0) return Date.now()
      } catch (error) {
        last = [`cannot list: ${String(error)}`]
      }
      await sleep(250)
    }
    throw new Error(`not converged after ${timeoutMs} ms: ${last.slice(0, 10).join('; ')}`)
  }

  /** Closes the load client's connections. */
  async close(): Promise<void> {
    await this.#transport.close()
  }
}
