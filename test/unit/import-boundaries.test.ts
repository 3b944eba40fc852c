// Enforces the layering of docs/ARCHITECTURE.md: each folder of src/ may import only the layers
// listed for it, so imports only ever point down.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, it } from 'node:test'

/** Layer -> the layers it may import (itself is always allowed). */
const ALLOWED: Record<string, readonly string[]> = {
  core: [],
  api: ['core'],
  kube: ['core'],
  runtime: ['core', 'kube'],
  engine: ['core', 'api', 'kube', 'runtime'],
  sdk: ['core', 'api'],
  testing: ['core', 'api', 'kube', 'runtime', 'sdk'],
  cluster: ['core', 'api', 'kube', 'runtime', 'sdk', 'testing'],
  cli: ['core', 'api', 'kube', 'runtime', 'engine', 'sdk', 'testing', 'cluster'],
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
  engine: ['undici'],
  testing: ['undici', 'yaml'],
  cluster: ['undici', 'yaml'],
  cli: ['commander', 'yaml', 'undici', '@datadog/pprof'],
}

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
  const [layer = ''] = relative('src', path).split('/')
  return layer
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
          if (layer === 'core' || layer === 'api')
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
})
