#!/usr/bin/env node
// Runs one test tier with node:test through tsx.
//
// Node 20's test runner finds no files when given a directory or a quoted glob together with a
// loader, and then exits 0; so this script expands the tier's globs itself, passes explicit files,
// and fails when no file matched or the runner reports zero tests.
//
//   node --import tsx scripts/run-tests.mjs unit|integration|e2e [extra node --test flags]
//
// The integration and e2e tiers share one local control plane per run (started here through the
// public harness) unless METACTL_USE_EXISTING_CLUSTER=1 points them at a cluster in KUBECONFIG.
import { spawn } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

const tiers = {
  unit: { roots: ['src', 'test/unit'], suffix: '.test.ts', cluster: false },
  // `nodes`: simulated nodes of the tier's shared control plane. Both cluster tiers have tests
  // whose Pods must run (workloads, PodService Ready True), so both get one node, which also
  // brings kube-scheduler, KWOK and the default controllers; tests that only need the API start
  // their own plane with `nodes: 0`.
  integration: { roots: ['test/integration'], suffix: '.test.ts', cluster: true, nodes: 1 },
  e2e: { roots: ['test/e2e', 'examples'], suffix: '.test.ts', cluster: true, nodes: 1 },
}

const [tierName, ...extra] = process.argv.slice(2)
const tier = tiers[tierName ?? '']
if (!tier) {
  console.error(`usage: run-tests.mjs ${Object.keys(tiers).join('|')} [node --test flags]`)
  process.exit(2)
}

function findFiles(dir, suffix) {
  let entries
  try {
    entries = readdirSync(dir)
  } catch {
    return []
  }
  return entries.flatMap((name) => {
    const path = join(dir, name)
    if (name === 'node_modules' || name === 'fixtures') return []
    if (statSync(path).isDirectory()) return findFiles(path, suffix)
    return name.endsWith(suffix) ? [relative('.', path)] : []
  })
}

const files = tier.roots.flatMap((root) => findFiles(root, tier.suffix)).sort()
if (files.length === 0) {
  console.error(`run-tests: no ${tierName} test files found under ${tier.roots.join(', ')}`)
  process.exit(1)
}

function runNodeTest(env) {
  return new Promise((resolve) => {
    const args = ['--import', 'tsx', '--test', '--test-reporter=spec', ...extra, ...files]
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env })
    let tail = ''
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk)
      tail = (tail + chunk.toString()).slice(-4000)
    })
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), tail }))
  })
}

async function main() {
  let env = { ...process.env }
  let cluster
  if (tier.cluster && process.env.METACTL_USE_EXISTING_CLUSTER !== '1') {
    // This script runs under `node --import tsx`, so it can use the TypeScript harness directly.
    const { startControlPlane } = await import('../src/testing/index.ts')
    console.log(`run-tests: starting a local control plane for the ${tierName} tier`)
    // CRDs known before kube-controller-manager starts are garbage-collected at once; ones
    // installed later wait for its next discovery sync (about 30 s).
    const crds = [
      ...findFiles('deploy/crds', '.yaml').filter((f) => !f.endsWith('kustomization.yaml')),
      ...findFiles('examples', 'crd.yaml'),
      ...findFiles('test/fixtures/crds', '.yaml'),
    ]
    cluster = await startControlPlane({ useExistingCluster: false, crds, nodes: tier.nodes })
    console.log(`run-tests: control plane ready (${cluster.kubeconfigPath})`)
    env = { ...env, KUBECONFIG: cluster.kubeconfigPath, METACTL_USE_EXISTING_CLUSTER: '1' }
  }
  let result
  try {
    result = await runNodeTest(env)
  } finally {
    if (cluster) await cluster.stop()
  }
  const match = /^(?:ℹ|#) tests (\d+)$/m.exec(result.tail)
  const count = match ? Number(match[1]) : 0
  if (count === 0) {
    console.error(`run-tests: the ${tierName} tier ran no tests; failing`)
    process.exit(1)
  }
  process.exit(result.code)
}

main().catch((error) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error)
  process.exit(1)
})
