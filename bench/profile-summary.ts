// Summarises a V8 CPU profile (.cpuprofile, from `node --cpu-prof`) or heap snapshot
// (.heapsnapshot, from `--heapsnapshot-signal`) in plain text, for docs/performance.md:
//   - CPU: self time (bottom-up) as % of samples, with idle, GC and "(program)" (V8 and native
//     code outside JS functions) apart; then by area (our engine code, each npm package, Node's
//     internals, WebAssembly), by file, and the top functions. V8 builtins such as JSON.parse get
//     no frame of their own: their time counts as their caller's self time.
//   - Heap: the top constructors by self size and by retained size (dominator tree; a group's
//     retained size counts only instances not held inside another of the same group).
//
//   node --import tsx bench/profile-summary.ts FILE.cpuprofile|FILE.heapsnapshot [top=25]
//
// Large snapshots need a larger heap: node --max-old-space-size=4096 --import tsx ...
import { readFileSync } from 'node:fs'

interface CpuNode {
  readonly id: number
  readonly callFrame: { functionName: string; url: string; lineNumber: number }
}

interface CpuProfile {
  readonly nodes: readonly CpuNode[]
  readonly samples: readonly number[]
  readonly startTime: number
  readonly endTime: number
}

const percent = (part: number, whole: number): string =>
  whole === 0 ? '-' : `${((part / whole) * 100).toFixed(1)} %`

/** Where a function lives: our code, a package, Node itself, or V8's own entries. */
export function areaOf(frame: CpuNode['callFrame']): string {
  const { url, functionName } = frame
  if (url === '') {
    if (functionName.startsWith('(')) return functionName
    if (/^(JSON\.)?(parse|stringify)$/.test(functionName)) return 'JSON parse/stringify'
    return 'native (V8 builtins, bindings)'
  }
  // undici parses HTTP with llhttp compiled to WebAssembly.
  if (url.startsWith('wasm://')) return 'WebAssembly (undici llhttp)'
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg !== null) return `package ${pkg[1] ?? ''}`
  if (url.startsWith('node:')) return 'node internals'
  if (/\/(dist|src)\//.test(url)) return 'metacontroller-ts'
  return 'other'
}

/** Shortens a URL to the part after node_modules/, dist/ or src/. */
function shortFile(url: string): string {
  return url.replace(/^file:\/\/.*?\/(node_modules|dist|src|bin)\//, '$1/')
}

function rows(map: Map<string, number>, total: number, top: number, busy: number): string[] {
  return [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, n]) => {
      const ofBusy = key === '(idle)' ? '' : percent(n, busy)
      return `  ${percent(n, total).padStart(7)} ${ofBusy.padStart(7)}  ${key}`
    })
}

/** Prints the bottom-up summary of a .cpuprofile. */
export function summariseCpuProfile(profile: CpuProfile, top: number): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const self = new Map<number, number>()
  for (const id of profile.samples) self.set(id, (self.get(id) ?? 0) + 1)
  const total = profile.samples.length
  const byArea = new Map<string, number>()
  const byFile = new Map<string, number>()
  const byFunction = new Map<string, number>()
  const add = (map: Map<string, number>, key: string, n: number): void => {
    map.set(key, (map.get(key) ?? 0) + n)
  }
  for (const [id, n] of self) {
    const frame = byId.get(id)?.callFrame
    if (frame === undefined) continue
    const area = areaOf(frame)
    add(byArea, area, n)
    if (frame.url !== '') add(byFile, shortFile(frame.url), n)
    const where = frame.url === '' ? '' : ` ${shortFile(frame.url)}:${frame.lineNumber + 1}`
    add(byFunction, `${frame.functionName || '(anonymous)'}${where}`, n)
  }
  const idle = byArea.get('(idle)') ?? 0
  const busy = total - idle
  const seconds = (profile.endTime - profile.startTime) / 1e6
  return [
    `${total} samples over ${seconds.toFixed(1)} s; busy (not idle) ${percent(busy, total)}`,
    '  % all  % busy  by area (self time)',
    ...rows(byArea, total, top, busy),
    '  % all  % busy  by file (self time)',
    ...rows(byFile, total, top, busy),
    '  % all  % busy  by function (self time)',
    ...rows(byFunction, total, top, busy),
  ]
}

interface HeapSnapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: string[]
      readonly node_types: [string[], ...unknown[]]
      readonly edge_fields: string[]
      readonly edge_types: [string[], ...unknown[]]
    }
  }
  readonly nodes: number[]
  readonly edges: number[]
  readonly strings: string[]
}

/** Immediate dominators (Cooper, Harvey and Kennedy's iterative algorithm) of the node graph. */
function dominators(count: number, successors: (n: number) => number[]): Int32Array {
  // Post-order from the root (node 0), iteratively.
  const order = new Int32Array(count).fill(-1)
  const postorder: number[] = []
  const predecessors: number[][] = Array.from({ length: count }, () => [])
  const stack: [number, number[], number][] = [[0, successors(0), 0]]
  order[0] = -2
  for (let frame = stack.at(-1); frame !== undefined; frame = stack.at(-1)) {
    const [node, next] = frame
    if (frame[2] < next.length) {
      const child = next[frame[2]++] ?? 0
      predecessors[child]?.push(node)
      if (order[child] === -1) {
        order[child] = -2
        stack.push([child, successors(child), 0])
      }
      continue
    }
    stack.pop()
    order[node] = postorder.length
    postorder.push(node)
  }
  const idom = new Int32Array(count).fill(-1)
  idom[0] = 0
  const intersect = (a: number, b: number): number => {
    while (a !== b) {
      while ((order[a] ?? 0) < (order[b] ?? 0)) a = idom[a] ?? 0
      while ((order[b] ?? 0) < (order[a] ?? 0)) b = idom[b] ?? 0
    }
    return a
  }
  for (let changed = true; changed;) {
    changed = false
    for (let i = postorder.length - 2; i >= 0; i--) {
      const node = postorder[i] ?? 0
      let best = -1
      for (const p of predecessors[node] ?? [])
        if (idom[p] !== -1) best = best === -1 ? p : intersect(p, best)
      if (best !== -1 && idom[node] !== best) {
        idom[node] = best
        changed = true
      }
    }
  }
  return idom
}

/** Prints the top constructors of a .heapsnapshot by self and by retained size. */
export function summariseHeapSnapshot(heap: HeapSnapshot, top: number): string[] {
  const { meta } = heap.snapshot
  const nf = meta.node_fields.length
  const ef = meta.edge_fields.length
  const [typeAt, nameAt, sizeAt, edgesAt] = ['type', 'name', 'self_size', 'edge_count'].map((f) =>
    meta.node_fields.indexOf(f)
  ) as [number, number, number, number]
  const [edgeTypeAt, toAt] = ['type', 'to_node'].map((f) => meta.edge_fields.indexOf(f)) as [
    number,
    number,
  ]
  const count = heap.nodes.length / nf
  const firstEdge = new Int32Array(count + 1)
  for (let i = 0; i < count; i++)
    firstEdge[i + 1] = (firstEdge[i] ?? 0) + (heap.nodes[i * nf + edgesAt] ?? 0) * ef
  const weak = meta.edge_types[0].indexOf('weak')
  const successors = (n: number): number[] => {
    const out: number[] = []
    for (let e = firstEdge[n] ?? 0; e < (firstEdge[n + 1] ?? 0); e += ef)
      if (heap.edges[e + edgeTypeAt] !== weak) out.push((heap.edges[e + toAt] ?? 0) / nf)
    return out
  }
  const group = (n: number): string => {
    const type = meta.node_types[0][heap.nodes[n * nf + typeAt] ?? 0] ?? '?'
    const name = heap.strings[heap.nodes[n * nf + nameAt] ?? 0] ?? '?'
    return type === 'object' || type === 'native' ? name : `(${type})`
  }
  const selfSize = (n: number): number => heap.nodes[n * nf + sizeAt] ?? 0
  const idom = dominators(count, successors)
  // Retained size: own size plus that of every node dominated, summed from the leaves up.
  const children: number[][] = Array.from({ length: count }, () => [])
  for (let n = 1; n < count; n++) if ((idom[n] ?? -1) >= 0) children[idom[n] ?? 0]?.push(n)
  const retained = new Float64Array(count)
  const visit: number[] = [0]
  const order: number[] = []
  for (let n = visit.pop(); n !== undefined; n = visit.pop()) {
    order.push(n)
    for (const c of children[n] ?? []) visit.push(c)
  }
  for (let i = order.length - 1; i >= 0; i--) {
    const n = order[i] ?? 0
    retained[n] = (retained[n] ?? 0) + selfSize(n)
    if (n !== 0) retained[idom[n] ?? 0] = (retained[idom[n] ?? 0] ?? 0) + (retained[n] ?? 0)
  }
  return heapGroupRows(count, children, group, selfSize, retained, top)
}

/** Sums self and retained size per group (retained only for outermost instances). */
function heapGroupRows(
  count: number,
  children: number[][],
  group: (n: number) => string,
  selfSize: (n: number) => number,
  retained: Float64Array,
  top: number
): string[] {
  const stats = new Map<string, { count: number; self: number; retained: number }>()
  const active = new Map<string, number>()
  // Depth-first over the dominator tree, counting how many ancestors share each group.
  const stack: [number, boolean][] = [[0, false]]
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [n, leaving] = entry
    const g = group(n)
    if (leaving) {
      active.set(g, (active.get(g) ?? 1) - 1)
      continue
    }
    const s = stats.get(g) ?? { count: 0, self: 0, retained: 0 }
    s.count++
    s.self += selfSize(n)
    if ((active.get(g) ?? 0) === 0) s.retained += retained[n] ?? 0
    stats.set(g, s)
    active.set(g, (active.get(g) ?? 0) + 1)
    stack.push([n, true])
    for (const c of children[n] ?? []) stack.push([c, false])
  }
  const total = retained[0] ?? 0
  const mb = (b: number): string => (b / 1024 / 1024).toFixed(1).padStart(7)
  const table = (key: 'self' | 'retained'): string[] =>
    [...stats]
      .filter(([g]) => g !== '(synthetic)')
      .sort((a, b) => b[1][key] - a[1][key])
      .slice(0, top)
      .map(
        ([g, s]) =>
          `  ${mb(s.self)} ${mb(s.retained)} ${String(s.count).padStart(9)}  ${g.slice(0, 80)}`
      )
  return [
    `${count} nodes, ${(total / 1024 / 1024).toFixed(1)} MiB reachable`,
    '  self MiB  retained MiB  count  group, by self size',
    ...table('self'),
    '  self MiB  retained MiB  count  group, by retained size',
    ...table('retained'),
  ]
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const file = process.argv[2]
  const top = Number(process.argv[3] ?? 25)
  if (file === undefined) throw new Error('usage: profile-summary.ts FILE [top]')
  const data = JSON.parse(readFileSync(file, 'utf8')) as unknown
  const lines = file.endsWith('.heapsnapshot')
    ? summariseHeapSnapshot(data as HeapSnapshot, top)
    : summariseCpuProfile(data as CpuProfile, top)
  console.log(lines.join('\n'))
}
