// Enforces the layering of docs/ARCHITECTURE.md: each folder of src/ may import only the layers
// listed for it, so imports only ever point down.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, normalize, relative } from 'node:path'
import { describe, it } from 'node:test'

/** Layer -> the layers it may import (itself is always allowed). */
const ALLOWED: Record<string, readonly string[]> = {
  core: [],
  api: ['core'],
  kube: ['core'],
  runtime: ['core', 'kube'],
  'in-memory': ['core', 'kube', 'runtime'],
  cluster: ['core', 'kube', 'runtime'],
  engine: ['core', 'api', 'kube', 'runtime'],
  // The conformance suite runs the engine over the in-memory API server; it is test code (it
  // imports node:test) and is left out of the build.
  'engine/conformance': ['core', 'api', 'kube', 'runtime', 'in-memory', 'engine'],
  sdk: ['core', 'api'],
  testing: ['core', 'api', 'kube', 'runtime', 'sdk', 'cluster'],
  // The engine's sync run offline over the in-memory cluster (`metactl render`), with SDK hooks.
  offline: ['core', 'api', 'kube', 'runtime', 'in-memory', 'engine', 'sdk'],
  cli: [
    'core',
    'api',
    'kube',
    'runtime',
    'in-memory',
    'cluster',
    'engine',
    'sdk',
    'testing',
    'offline',
  ],
}

/**
 * Layer -> its sub-folders, lowest first: a file in one may import only those before it (and its
 * own). Every sub-folder of such a layer must be listed, so a new one takes its place in the order.
 * The layer's top-level files (its index, and the engine's `engine.ts` and the `engine-context.ts`
 * its sub-folders read their shared types from) compose the sub-folders and are not ordered.
 */
const SUBFOLDERS: Record<string, readonly string[]> = {
  runtime: [
    'clock',
    'rate-limit',
    'diagnostics',
    'informers',
    'queue',
    'metrics',
    'leader',
    'ring',
  ],
  engine: [
    'metrics',
    'hooks',
    'children',
    'rollout',
    'events',
    'forbidden',
    'customize',
    'leadership',
    'leader',
    'sharding',
    'loop',
    'meta',
    'sync',
    'composite',
    'decorator',
  ],
}

/**
 * Packages a layer may use besides node: built-ins; core and api stay dependency-free, and the
 * sdk's only package is kubernetes-types, which is declarations only (no run-time code).
 */
const PACKAGES: Record<string, readonly string[]> = {
  core: [],
  api: [],
  sdk: ['kubernetes-types'],
  kube: ['undici', 'yaml'],
  runtime: ['prom-client'],
  'in-memory': [],
  cluster: ['undici', 'yaml'],
  engine: ['undici'],
  'engine/conformance': [],
  testing: [],
  offline: [],
  cli: ['commander', 'yaml', 'undici', '@datadog/pprof'],
}

/** The node: modules only test code may import. */
const TEST_ONLY_BUILTINS = ['node:test', 'node:assert', 'node:assert/strict']

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : []
  })
}

function importsOf(text: string): string[] {
  const specifiers: string[] = []
  const pattern =
    /^\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm
  for (const match of text.matchAll(pattern)) specifiers.push(match[1] ?? match[2] ?? '')
  return specifiers
}

/**
 * The code of a file to scan. A scaffold template (`src/cli/init/scaffold-*.ts`) holds the
 * sources of generated projects as text, whose import lines are not imports of this package, so
 * only its head, up to its first export, is scanned: its own imports are all there.
 */
function codeOf(path: string): string {
  const text = readFileSync(path, 'utf8')
  if (!/(^|\/)scaffold-[^/]*\.ts$/.test(path)) return text
  const body = /^export /m.exec(text)
  return body === null ? text : text.slice(0, body.index)
}

function layerOf(path: string): string {
  const [layer = '', sub = ''] = relative('src', path).split('/')
  const nested = `${layer}/${sub}`
  return nested in ALLOWED ? nested : layer
}

/** The sub-folder of its layer a source file sits in, or undefined for a top-level file. */
function subfolderOf(path: string): string | undefined {
  const parts = relative(join('src', layerOf(path)), path).split('/')
  return parts.length > 1 ? parts[0] : undefined
}

/** The source files `file` imports, as paths (type-only imports too: they tie modules as well). */
function localImportsOf(file: string): string[] {
  return importsOf(codeOf(file))
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => normalize(join(file, '..', spec)).replace(/\.js$/, '.ts'))
}

/** The strongly connected groups of two or more files (Tarjan), each sorted: the cycles. */
function importCycles(files: readonly string[]): string[][] {
  const edges = new Map(files.map((f) => [f, localImportsOf(f)]))
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  const visit = (file: string): void => {
    index.set(file, index.size)
    low.set(file, index.get(file) ?? 0)
    stack.push(file)
    onStack.add(file)
    for (const next of edges.get(file) ?? []) {
      if (!edges.has(next)) continue
      if (!index.has(next)) visit(next)
      if (onStack.has(next)) low.set(file, Math.min(low.get(file) ?? 0, low.get(next) ?? 0))
    }
    if (low.get(file) !== index.get(file)) return
    const group: string[] = []
    for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
      onStack.delete(top)
      group.push(top)
      if (top === file) break
    }
    if (group.length > 1) cycles.push(group.sort())
  }
  for (const file of files) if (!index.has(file)) visit(file)
  return cycles
}

describe('import boundaries', () => {
  const files = sourceFiles('src').filter((f) => layerOf(f) in ALLOWED)

  it('finds source files in known layers only', () => {
    assert.ok(files.length > 0)
    const unknown = sourceFiles('src')
      .map(layerOf)
      .filter((layer) => !(layer in ALLOWED) && !layer.endsWith('.ts'))
    assert.deepEqual([...new Set(unknown)], [])
  })

  it('only imports downward, and only the packages a layer may use', () => {
    const violations: string[] = []
    for (const file of files) {
      const layer = layerOf(file)
      for (const spec of importsOf(codeOf(file))) {
        if (spec.startsWith('.')) {
          const target = layerOf(join(file, '..', spec))
          if (target !== layer && !(ALLOWED[layer] ?? []).includes(target)) {
            violations.push(`${file} (${layer}) imports ${spec} (${target})`)
          }
        } else if (spec.startsWith('node:')) {
          const testOnly = TEST_ONLY_BUILTINS.includes(spec) && layer !== 'engine/conformance'
          if (layer === 'core' || layer === 'api' || testOnly)
            violations.push(`${file} (${layer}) imports ${spec}`)
        } else {
          const pkg = spec.startsWith('@')
            ? spec.split('/').slice(0, 2).join('/')
            : spec.split('/')[0]
          if (!(PACKAGES[layer] ?? []).includes(pkg ?? '')) {
            violations.push(`${file} (${layer}) imports package ${spec}`)
          }
        }
      }
    }
    assert.deepEqual(violations, [])
  })

  it('lists every sub-folder of an ordered layer in its order', () => {
    const unlisted = files
      .filter((f) => layerOf(f) in SUBFOLDERS)
      .map((f) => [layerOf(f), subfolderOf(f)] as const)
      .filter(([layer, sub]) => sub !== undefined && !(SUBFOLDERS[layer] ?? []).includes(sub))
      .map(([layer, sub]) => `${layer}/${sub ?? ''}`)
    assert.deepEqual([...new Set(unlisted)], [])
  })

  it('only imports lower sub-folders inside a layer', () => {
    const violations: string[] = []
    for (const file of files) {
      const layer = layerOf(file)
      const order = SUBFOLDERS[layer]
      const from = subfolderOf(file)
      if (order === undefined || from === undefined) continue
      for (const target of localImportsOf(file)) {
        const to = layerOf(target) === layer ? subfolderOf(target) : undefined
        if (to !== undefined && order.indexOf(to) > order.indexOf(from))
          violations.push(`${file} (${layer}/${from}) imports ${target} (${layer}/${to})`)
      }
    }
    assert.deepEqual(violations, [])
  })

  it('has no import cycle between source files', () => {
    assert.deepEqual(importCycles(sourceFiles('src')), [])
  })
})
