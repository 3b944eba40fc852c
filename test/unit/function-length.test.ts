// Keeps every function of the package short enough to read in one screen: the sync pipeline is
// meant to stay a sequence of small named steps (docs/ARCHITECTURE.md), not grow back into one
// closure. Measured with the TypeScript parser, comments and blank lines included. Test files
// are left out: a test's table of cases may be long.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import ts from 'typescript'

/** The project's limit: no function over 80 lines. */
const MAX_LINES = 80
const ROOTS = ['src']

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : []
  })
}

/** Every function-like node longer than the limit, as `file:line name (N lines)`. */
function longFunctions(path: string): string[] {
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = file.getLineAndCharacterOfPosition(node.getStart()).line
      const end = file.getLineAndCharacterOfPosition(node.end).line
      const lines = end - start + 1
      const name = node.name?.getText(file) ?? '(anonymous)'
      if (lines > MAX_LINES) found.push(`${path}:${start + 1} ${name} (${lines} lines)`)
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

describe('function length', () => {
  it(`keeps every function of ${ROOTS.join(', ')} within ${MAX_LINES} lines`, () => {
    const files = ROOTS.flatMap(sourceFiles)
    assert.ok(files.length > 50, 'the source files were not found')
    assert.deepEqual(files.flatMap(longFunctions), [])
  })
})
