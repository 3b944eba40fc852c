// Keeps the docs honest about what the code does: the flag defaults docs/deploy.md lists are
// the ones `metactl run --help` shows, no doc points at a file that is not there, the README
// lists every command, and nothing is said twice. The checks live in test/support/docs/.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { runCommand } from '../../src/cli/commands/run.js'
import { scaffoldFiles } from '../../src/cli/init/init-command.js'
import { scaffoldNames } from '../../src/cli/init/scaffold-names.js'
import { missingCommands, registeredCommands, tableCommands } from '../support/docs/cli-commands.js'
import { repeatedParagraphs } from '../support/docs/repeated-paragraphs.js'
import { missingPaths, subjectFolders, withFolders } from '../support/docs/repository-paths.js'

function markdownFiles(): string[] {
  const docs = readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f))
  return ['README.md', 'CHANGELOG.md', ...docs, 'examples/podservice/README.md']
}

/** The docs that describe the code as it is now (the CHANGELOG records how it was). */
function currentDocs(): string[] {
  const examples = readdirSync('examples').map((dir) => join('examples', dir, 'README.md'))
  return markdownFiles()
    .filter((file) => file !== 'CHANGELOG.md')
    .concat(examples.filter((file) => existsSync(file)))
    .filter((file, i, all) => all.indexOf(file) === i)
}

/** Every file of the repository (tracked or new, not ignored), with its folders. */
function repositoryTree(): Set<string> {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    encoding: 'utf8',
  })
  return withFolders(listed.split('\n').filter((f) => f !== '' && existsSync(f)))
}

/** The files `metactl init` writes: README.md and the guides name them as the project's. */
function scaffoldedProject(): Set<string> {
  const names = scaffoldNames({
    name: 'my-controller',
    kind: 'Greeting',
    group: 'example.com',
    version: 'v1',
  })
  const versions = { metacontrollerTs: '0', typescript: '0', tsx: '0', typesNode: '0', yaml: '0' }
  return withFolders(Object.keys(scaffoldFiles(names, versions)))
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

  it('names only repository paths that exist (from the root, src/ or the folders it is about)', () => {
    const tree = repositoryTree()
    const project = scaffoldedProject()
    const missing = currentDocs().flatMap((file) => {
      const text = readFileSync(file, 'utf8')
      const bases = subjectFolders(file, text, tree)
      return missingPaths(file, text, { tree, bases, others: [project] })
    })
    assert.deepEqual(missing, [])
  })

  it('README.md lists every metactl command in its CLI table', async () => {
    const listed = tableCommands(readFileSync('README.md', 'utf8'))
    assert.deepEqual(missingCommands(await registeredCommands(), listed), [])
  })

  it('says each thing once: no paragraph of README.md or docs/*.md repeats another, in any words', () => {
    const docs = markdownFiles()
      .filter((file) => file === 'README.md' || file.startsWith('docs/'))
      .map((file) => ({ file, text: readFileSync(file, 'utf8') }))
    assert.deepEqual(repeatedParagraphs(docs), [])
  })
})
