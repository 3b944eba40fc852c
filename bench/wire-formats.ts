// The API server's CPU for our kind of traffic in each wire format: ConfigMaps (built-in, as the
// children) in JSON and protobuf (`application/vnd.kubernetes.protobuf`), and the BenchParent
// custom resource (as the parents: creates, then status updates) in JSON and CBOR. The traffic
// comes from a small Go program using client-go (bench/wire-format/, built here with `go build`),
// since our client speaks JSON only; it reads the API server's CPU from /proc/<pid>/stat around
// each phase (creates and updates with a watch of the namespace open in the same format, then five
// paginated lists of the namespace). One fresh control plane
// (`--nodes 0`) with the CBORServingAndStorage gate on, so that both formats of a kind meet the
// same server; three rounds, the formats alternating first within each; a fresh namespace per run.
//
//   node --import tsx bench/wire-formats.ts [objects=10000] [rounds=3] [kinds=configmaps,benchparents]
import { execFile, execFileSync } from 'node:child_process'
import { promisify } from 'node:util'
import { mkdirSync } from 'node:fs'
import { homedir, loadavg } from 'node:os'
import { join } from 'node:path'
import { readControlPlaneState } from '../src/cluster/control-plane-state.js'
import { startControlPlane } from '../src/testing/index.js'
import type { ControlPlane } from '../src/testing/index.js'
import { createNamespace } from './bench-cluster.js'
import { PARENT_CRD } from './bench-parents.js'
import { createRetrying } from './huge-retry.js'

const objects = Number(process.argv[2] ?? '10000')
const rounds = Number(process.argv[3] ?? '3')
/** Which kinds to measure (both by default). */
const kindNames = (process.argv[4] ?? 'configmaps,benchparents').split(',')
if (!Number.isInteger(objects) || objects < 1 || !Number.isInteger(rounds) || rounds < 1) {
  console.error('usage: wire-formats.ts [objects=10000] [rounds=3] (positive integers)')
  process.exit(2)
}
const root = process.cwd()
/** The formats compared per kind; the first is the baseline (JSON). */
const KINDS = [
  { kind: 'configmaps', formats: ['json', 'protobuf'] },
  { kind: 'benchparents', formats: ['json', 'cbor'] },
].filter(({ kind }) => kindNames.includes(kind))
if (KINDS.length === 0) {
  console.error('kinds must name configmaps, benchparents or both')
  process.exit(2)
}

/** What one run of the Go program printed. */
interface Phase {
  readonly apiServerCpuMs: number
  readonly wallMs: number
}
interface RunResult {
  readonly kind: string
  readonly format: string
  readonly create: Phase
  readonly update: Phase
  readonly list: Phase
  /** Times the server ended the watch (it closes watchers that fall behind) and it was reopened. */
  readonly watchReopened: number
}

/** Builds the Go program into the project's cache and returns its path. */
function buildDriver(): string {
  const dir = join(homedir(), '.cache/metacontroller-ts/bench')
  mkdirSync(dir, { recursive: true })
  const binary = join(dir, 'wire-format')
  const started = performance.now()
  execFileSync('go', ['build', '-o', binary, '.'], {
    cwd: join(root, 'bench/wire-format'),
    stdio: 'inherit',
  })
  console.log(`go build: ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return binary
}

/** The API server's pid, from the plane's recorded processes. */
function apiServerPid(plane: ControlPlane): number {
  const pid = readControlPlaneState(plane.dir)?.processes.find(
    (p) => p.name === 'kube-apiserver'
  )?.pid
  if (pid === undefined) throw new Error('no kube-apiserver among the plane recorded processes')
  return pid
}

/** Runs the Go program once for a kind and format in a fresh namespace. */
async function runOnce(
  plane: ControlPlane,
  binary: string,
  kind: string,
  format: string,
  index: number
): Promise<RunResult> {
  const namespace = `wire-${kind}-${format}-${index}`
  await createRetrying(() => createNamespace(plane.client, namespace))
  const cbor = format === 'cbor' ? 'true' : 'false'
  // Asynchronously: the client's pooled connections must see the server close them meanwhile.
  const run = promisify(execFile)(
    binary,
    [
      `--kubeconfig=${plane.kubeconfigPath}`,
      `--apiserver-pid=${apiServerPid(plane)}`,
      `--kind=${kind}`,
      `--format=${format}`,
      `--namespace=${namespace}`,
      `--count=${objects}`,
    ],
    {
      encoding: 'utf8',
      env: {
        ...process.env,
        KUBE_FEATURE_ClientsAllowCBOR: cbor,
        KUBE_FEATURE_ClientsPreferCBOR: cbor,
      },
      maxBuffer: 1 << 20,
    }
  )
  try {
    return JSON.parse((await run).stdout) as RunResult
  } catch (error) {
    // The driver prints its figures before deleting the objects: a failed deletion keeps them.
    const printed = (error as { stdout?: string }).stdout ?? ''
    if (printed === '') throw error
    console.log(`  (after the figures: ${String((error as { stderr?: string }).stderr).trim()})`)
    return JSON.parse(printed) as RunResult
  }
}

const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN
const cpuS = (p: Phase): string => (p.apiServerCpuMs / 1000).toFixed(2)

/** One phase's API server CPU per run, in seconds. */
type PhaseName = 'create' | 'update' | 'list'
const PHASES: readonly PhaseName[] = ['create', 'update', 'list']

/** Prints per kind and format the medians per phase and of the total, and the change against JSON. */
function report(results: readonly RunResult[]): void {
  console.log(
    '\n| kind | format | API server CPU s: creates | updates | 5 lists | total (median) | vs JSON |'
  )
  console.log('|---|---|---|---|---|---|---|')
  for (const { kind, formats } of KINDS) {
    const runs = (format: string): RunResult[] =>
      results.filter((r) => r.kind === kind && r.format === format)
    const total = (r: RunResult): number =>
      PHASES.reduce((sum, phase) => sum + r[phase].apiServerCpuMs, 0) / 1000
    const baseline = median(runs('json').map(total))
    for (const format of formats) {
      const mine = runs(format)
      const phaseCell = (phase: PhaseName): string => {
        const values = mine.map((r) => r[phase].apiServerCpuMs / 1000)
        return `${median(values).toFixed(2)} (${values.map((v) => v.toFixed(2)).join(', ')})`
      }
      const mid = median(mine.map(total))
      const change =
        format === 'json' ? '–' : `${((100 * (mid - baseline)) / baseline).toFixed(1)} %`
      console.log(
        `| ${kind} | ${format} | ${PHASES.map(phaseCell).join(' | ')} | ${mid.toFixed(2)} | ${change} |`
      )
    }
  }
}

const binary = buildDriver()
const plane = await startControlPlane({
  useExistingCluster: false,
  nodes: 0,
  featureGates: { CBORServingAndStorage: true },
  crds: [PARENT_CRD],
})
try {
  const results: RunResult[] = []
  for (let round = 0; round < rounds; round++)
    for (const { kind, formats } of KINDS) {
      // Alternate which format goes first, so neither always meets a fresher server.
      const order = round % 2 === 0 ? formats : [...formats].reverse()
      for (const format of order) {
        const result = await runOnce(plane, binary, kind, format, results.length)
        results.push(result)
        console.log(
          `round ${round + 1} ${kind} ${format}: API server CPU ${cpuS(result.create)} s creates, ${cpuS(result.update)} s updates, ${cpuS(result.list)} s lists, watch reopened ${result.watchReopened}× (wall ${(result.create.wallMs / 1000).toFixed(1)} + ${(result.update.wallMs / 1000).toFixed(1)} s); load ${(loadavg()[0] ?? 0).toFixed(1)}`
        )
      }
    }
  report(results)
} finally {
  await plane.stop()
}
