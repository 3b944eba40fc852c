// What the engine benchmarks observe from outside the engine: when children reach the data a
// parent's spec asks for (create→children and update→children latencies, from a ConfigMap
// informer in the benchmark), and the API server's own request latencies (its /metrics), so that
// the engine's time can be told apart from the server's.
import type { KubeObject } from '../src/core/kube-object.js'
import type { KubeTransport } from '../src/kube/kube-transport.js'

interface Expectation {
  readonly kind: 'create' | 'update'
  readonly startedMs: number
  readonly n: string
  readonly parts: Set<string>
}

/**
 * Matches ConfigMap events against parents whose children are awaited: a parent created or
 * updated at `startedMs` with `spec.n` is done when both its children carry that `n`.
 */
export class ChildLatencies {
  readonly #pending = new Map<string, Expectation>()
  readonly create: number[] = []
  readonly update: number[] = []

  /** Awaits both children of `parent` with data `n`; call before sending the request. */
  expect(parent: string, n: number, kind: 'create' | 'update', startedMs: number): void {
    this.#pending.set(parent, { kind, startedMs, n: String(n), parts: new Set() })
  }

  /** Feeds a ConfigMap seen by the benchmark's informer (add or update). */
  observe(child: KubeObject, nowMs: number = performance.now()): void {
    const data = child['data'] as { parent?: string; part?: string; n?: string } | undefined
    if (data?.parent === undefined || data.part === undefined) return
    const waiting = this.#pending.get(data.parent)
    if (waiting === undefined || waiting.n !== data.n) return
    waiting.parts.add(data.part)
    if (waiting.parts.size < 2) return
    this.#pending.delete(data.parent)
    this[waiting.kind].push(nowMs - waiting.startedMs)
  }

  /** Parents whose children are still awaited. */
  get pending(): number {
    return this.#pending.size
  }
}

/** The `q`-quantile (0..1) of `values` by nearest rank; NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN
}

/** Sum and count of `apiserver_request_duration_seconds` per `VERB resource[/subresource]`. */
export type ServerLatencies = Map<string, { sumS: number; count: number }>

/** Reads the API server's request-duration histograms (long-running WATCH and CONNECT left out). */
export async function readServerLatencies(transport: KubeTransport): Promise<ServerLatencies> {
  const text = await transport.requestText({
    method: 'GET',
    path: '/metrics',
    accept: 'text/plain',
  })
  const out: ServerLatencies = new Map()
  for (const line of text.split('\n')) {
    const match = /^apiserver_request_duration_seconds_(sum|count)\{([^}]*)\} (\S+)$/.exec(line)
    if (match === null) continue
    const label = (name: string): string =>
      new RegExp(`(?:^|,)${name}="([^"]*)"`).exec(match[2] ?? '')?.[1] ?? ''
    const verb = label('verb')
    if (verb === 'WATCH' || verb === 'CONNECT') continue
    const sub = label('subresource')
    const key = `${verb} ${label('resource')}${sub === '' ? '' : `/${sub}`}`
    const entry = out.get(key) ?? { sumS: 0, count: 0 }
    if (match[1] === 'sum') entry.sumS += Number(match[3])
    else entry.count += Number(match[3])
    out.set(key, entry)
  }
  return out
}

/** Per key, the requests and mean server latency between two readings, busiest first. */
export function serverLatencyRows(
  after: ServerLatencies,
  before: ServerLatencies,
  resources: readonly string[]
): { key: string; count: number; meanMs: number; totalS: number }[] {
  const rows = []
  for (const [key, { sumS, count }] of after) {
    if (!resources.some((r) => key.split(' ')[1]?.startsWith(r) === true)) continue
    const prior = before.get(key) ?? { sumS: 0, count: 0 }
    const n = count - prior.count
    if (n <= 0) continue
    const totalS = sumS - prior.sumS
    rows.push({ key, count: n, meanMs: (totalS / n) * 1000, totalS })
  }
  return rows.sort((a, b) => b.count - a.count)
}
