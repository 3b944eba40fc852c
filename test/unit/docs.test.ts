// Keeps the docs honest about what the code does: the flag defaults docs/deploy.md lists are
// the ones `metactl run --help` shows, and no doc points at a file outside the repository.
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { runCommand } from '../../src/cli/commands/run.js'

function markdownFiles(): string[] {
  const docs = readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f))
  return ['README.md', 'CHANGELOG.md', ...docs, 'examples/podservice/README.md']
}

describe('docs', () => {
  it('docs/deploy.md gives the defaults metactl run --help shows', () => {
    const table = readFileSync('docs/deploy.md', 'utf8')
    const command = runCommand()
    const checked: string[] = []
    for (const option of command.options) {
      const row = table
        .split('\n')
        .find((line) => line.startsWith('|') && line.includes(`\`${option.long ?? ''}\``))
      if (row === undefined || option.defaultValue === undefined) continue
      const cells = row.split('|').map((c) => c.trim())
      const flags = [...(cells[1] ?? '').matchAll(/`(--[a-z-]+)`/g)].map((m) => m[1])
      const values = [...(cells[2] ?? '').matchAll(/`([^`]*)`/g)].map((m) => m[1])
      const value = values[flags.indexOf(option.long)] ?? values[0]
      const expected = option.defaultValue === '' ? '""' : String(option.defaultValue)
      assert.equal(value, expected, `default of ${option.long ?? ''} in docs/deploy.md`)
      checked.push(option.long ?? '')
    }
    assert.ok(checked.includes('--client-go-qps') && checked.includes('--client-go-burst'))
  })

  it('links and quoted paths stay inside the repository and exist', () => {
    const root = resolve('.')
    const problems: string[] = []
    for (const file of markdownFiles()) {
      const text = readFileSync(file, 'utf8')
      const targets = [
        ...[...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1] ?? ''),
        ...[...text.matchAll(/`(\.\.\/[^`\s]+)`/g)].map((m) => m[1] ?? ''),
      ].filter((t) => !/^[a-z]+:/.test(t))
      for (const target of targets) {
        const path = resolve(dirname(file), target)
        if (relative(root, path).startsWith('..')) problems.push(`${file}: ${target} is outside`)
        else if (!existsSync(path)) problems.push(`${file}: ${target} does not exist`)
      }
    }
    assert.deepEqual(problems, [])
  })

  it('says each thing once: no paragraph of README.md or docs/*.md is repeated', () => {
    const files = markdownFiles().filter((f) => f === 'README.md' || f.startsWith('docs/'))
    const seen = new Map<string, string>()
    const repeated: string[] = []
    for (const file of files) {
      for (const paragraph of paragraphsOf(readFileSync(file, 'utf8'))) {
        const first = seen.get(paragraph)
        if (first === undefined) seen.set(paragraph, file)
        else
          repeated.push(`${file} repeats a paragraph of ${first}: "${paragraph.slice(0, 60)}..."`)
      }
    }
    assert.deepEqual(repeated, [])
  })
})

/**
 * The prose paragraphs of a Markdown text, whitespace folded: code blocks, headings, tables and
 * short lines (list stubs, "Examples:") are left out, being legitimately alike across files.
 */
function paragraphsOf(text: string): string[] {
  return text
    .replace(/```[\s\S]*?```/g, '')
    .split(/\n\s*\n/)
    .map((p) => p.split(/\s+/).join(' ').trim())
    .filter((p) => p.length >= 60 && !p.startsWith('#') && !p.startsWith('|'))
}
