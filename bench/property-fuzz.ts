// The decoder properties of the unit tests (test/support/decoder-properties.ts), run much longer
// with a random seed: hook responses, controller specs, label and annotation selectors, Go
// durations and kubeconfigs.
//
//   node --import tsx bench/property-fuzz.ts [runs=10000] [seed=random] [stall-seconds=120]
//
// It prints the seed first; a failure prints fast-check's counterexample and the seed and path
// to replay it. Each decoder's properties run in a child process (a worker thread cannot load
// TypeScript under Node 20): one that reports nothing for `stall-seconds` is taken for a hang,
// stopped, and reported with the property it was in.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { DECODER_PROPERTIES } from '../test/support/decoder-properties.js'
import type { RunParameters } from '../test/support/decoder-properties.js'

/** Cases per progress report. */
const CHUNK = 500

interface Job {
  readonly group: string
  readonly run: RunParameters
}

type Report =
  | { readonly kind: 'start'; readonly name: string }
  | { readonly kind: 'pass'; readonly name: string; readonly ms: number }
  | { readonly kind: 'fail'; readonly name: string; readonly message: string }
  | { readonly kind: 'done' }

/** Child side: checks one decoder's properties, reporting each start and outcome. */
async function checkGroup({ group, run }: Job): Promise<void> {
  const post = (report: Report): void => {
    process.stdout.write(`${JSON.stringify(report)}\n`)
  }
  for (const { name, check } of DECODER_PROPERTIES[group] ?? []) {
    post({ kind: 'start', name })
    const started = performance.now()
    try {
      // Chunks of CHUNK cases, seeds seed, seed + 1, …: each chunk's report shows progress, and
      // the same arguments replay the same cases.
      for (let done = 0, i = 0; done < run.numRuns; done += CHUNK, i++) {
        await check({ seed: run.seed + i, numRuns: Math.min(CHUNK, run.numRuns - done) })
        post({ kind: 'start', name })
      }
      post({ kind: 'pass', name, ms: performance.now() - started })
    } catch (error) {
      post({ kind: 'fail', name, message: error instanceof Error ? error.message : String(error) })
    }
  }
  post({ kind: 'done' })
}

/** Main side: runs one group in a child; resolves with its failure count (a hang counts). */
function runGroup(job: Job, stallMs: number): Promise<number> {
  return new Promise((resolve) => {
    const args = ['--import', 'tsx', fileURLToPath(import.meta.url), 'child', JSON.stringify(job)]
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
    let failures = 0
    let current = '(starting)'
    let finished = false
    const finish = (count: number): void => {
      if (finished) return
      finished = true
      clearTimeout(timer)
      resolve(count)
    }
    const onStall = (): void => {
      console.log(`HANG  ${job.group}: ${current}: no result in ${stallMs / 1000} s; stopped`)
      child.kill()
      finish(failures + 1)
    }
    let timer = setTimeout(onStall, stallMs)
    createInterface({ input: child.stdout }).on('line', (line) => {
      clearTimeout(timer)
      timer = setTimeout(onStall, stallMs)
      const report = JSON.parse(line) as Report
      if (report.kind === 'start') current = report.name
      else if (report.kind === 'pass') {
        console.log(`ok    ${job.group}: ${report.name} (${(report.ms / 1000).toFixed(1)} s)`)
      } else if (report.kind === 'fail') {
        failures++
        console.log(`FAIL  ${job.group}: ${report.name}\n${report.message}\n`)
      } else finish(failures)
    })
    child.on('exit', (code, signal) => {
      if (finished) return
      console.log(`FAIL  ${job.group}: ${current}: the process ended (${signal ?? code ?? ''})`)
      finish(failures + 1)
    })
  })
}

if (process.argv[2] !== 'child') {
  const numRuns = Number(process.argv[2] ?? 10_000)
  const seed =
    process.argv[3] === undefined ? Date.now() ^ (Math.random() * 2 ** 31) : Number(process.argv[3])
  const stallMs = Number(process.argv[4] ?? 120) * 1000
  console.log(`property fuzz: seed ${seed}, ${numRuns} cases per property`)
  console.log(`replay: node --import tsx bench/property-fuzz.ts ${numRuns} ${seed}`)
  let failures = 0
  for (const group of Object.keys(DECODER_PROPERTIES)) {
    failures += await runGroup({ group, run: { seed, numRuns } }, stallMs)
  }
  console.log(failures === 0 ? 'all properties held' : `${failures} properties failed`)
  process.exitCode = failures === 0 ? 0 : 1
} else {
  await checkGroup(JSON.parse(process.argv[3] ?? '{}') as Job)
}
