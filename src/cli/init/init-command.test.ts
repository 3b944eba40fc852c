import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { parse } from 'yaml'
import { main } from '../main.js'

function capture(): {
  out: string[]
  err: string[]
  io: { out(l: string): void; err(l: string): void }
} {
  const out: string[] = []
  const err: string[] = []
  return { out, err, io: { out: (l) => out.push(l), err: (l) => err.push(l) } }
}

describe('metactl init', () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-init-'))
  after(() => {
    rmSync(work, { recursive: true, force: true })
  })

  it('writes the project with the names given, and types matching its CRD', async () => {
    const c = capture()
    const dir = join(work, 'site-controller')
    const code = await main(
      [
        'node',
        'metactl',
        'init',
        dir,
        '--kind',
        'Website',
        '--group',
        'web.example.com',
        '--package',
        '^9.9.9',
      ],
      c.io
    )
    assert.equal(code, 0, c.err.join('\n'))
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      name: string
      dependencies: Record<string, string>
    }
    assert.equal(pkg.name, 'site-controller')
    assert.equal(pkg.dependencies['metacontroller-ts'], '^9.9.9')
    const crd = parse(readFileSync(join(dir, 'deploy/crd.yaml'), 'utf8')) as {
      metadata: { name: string }
    }
    assert.equal(crd.metadata.name, 'websites.web.example.com')
    assert.match(readFileSync(join(dir, 'src/types.ts'), 'utf8'), /^export interface Website \{$/m)
    assert.match(
      readFileSync(join(dir, 'src/hook.ts'), 'utf8'),
      /defineCompositeHook<Website, ConfigMap, WebsiteStatus>/
    )
    assert.deepEqual(readdirSync(join(dir, 'test')).sort(), ['controller.test.ts', 'hook.test.ts'])
  })

  it('refuses a directory that is not empty, and names it can not use', async () => {
    const full = join(work, 'full')
    await main(['node', 'metactl', 'init', full], capture().io)
    writeFileSync(join(full, 'extra'), '')
    const c = capture()
    assert.equal(await main(['node', 'metactl', 'init', full], c.io), 1)
    assert.match(c.err.join('\n'), /is not empty; pick a new directory \(or --force/)
    const bad = capture()
    assert.equal(await main(['node', 'metactl', 'init', join(work, 'My_Project')], bad.io), 1)
    assert.match(bad.err.join('\n'), /"My_Project" cannot name the project/)
    const kind = capture()
    assert.equal(
      await main(['node', 'metactl', 'init', join(work, 'k'), '--kind', 'lower'], kind.io),
      1
    )
    assert.match(kind.err.join('\n'), /--kind "lower" must be UpperCamelCase/)
  })
})
