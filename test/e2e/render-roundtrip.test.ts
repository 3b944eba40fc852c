// `metactl render` output is what the engine would leave in the cluster, so fed back as
// --observed it plans nothing; and --diff shows, per child, what would change.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { metactl } from '../support/run-metactl.js'

const FIXTURES = 'test/fixtures/render'
const BASE = [
  'render',
  '--controller',
  `${FIXTURES}/controller.yaml`,
  '--parent',
  `${FIXTURES}/parent.yaml`,
  '--hook-module',
  `${FIXTURES}/hook.ts`,
]

describe('metactl render round trip and --diff', () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-render-'))
  after(() => {
    rmSync(work, { recursive: true, force: true })
  })

  for (const start of [[], ['--observed', `${FIXTURES}/observed.yaml`]]) {
    const title = start.length === 0 ? 'no observed children' : 'observed.yaml'
    it(`feeds its own output back as --observed with nothing to do (from ${title})`, async () => {
      const first = await metactl([...BASE, ...start])
      assert.equal(first.code, 0, first.stderr)
      const file = join(work, `written-${start.length}.yaml`)
      writeFileSync(file, first.stdout)
      const second = await metactl([...BASE, '--observed', file])
      assert.equal(second.code, 0, second.stderr)
      const plan = second.stdout
        .split('\n')
        .filter((line) =>
          /^# {3}(?:unchanged|create|update|recreate|delete|skip|error) /.test(line)
        )
      assert.deepEqual(plan, [
        '#   unchanged  Pod.v1 demo/shop-web',
        '#   unchanged  Service.v1 demo/shop',
        '#   unchanged  ConfigMap.v1 demo/shop-pages',
      ])
      const diff = await metactl([...BASE, '--observed', file, '--diff'])
      assert.equal(diff.stdout.trim(), '# No changes: every desired child is as observed.')
    })
  }

  it('--diff shows the changed lines of an update, and a create from nothing', async () => {
    const { code, stdout } = await metactl([
      ...BASE,
      '--observed',
      `${FIXTURES}/observed.yaml`,
      '--diff',
    ])
    assert.equal(code, 0)
    const lines = stdout.split('\n')
    const update = lines.indexOf('+++ written Service.v1 demo/shop (update)')
    assert.ok(update > 0, stdout)
    assert.equal(lines[update - 1], '--- observed Service.v1 demo/shop')
    const body = lines.slice(
      update + 1,
      lines.findIndex((l, i) => i > update && l.startsWith('--- '))
    )
    assert.deepEqual(
      body.filter((l) => l.startsWith('-') || l.startsWith('+')),
      [
        '-     - port: 8080',
        '-       targetPort: 8080',
        '-       protocol: TCP',
        '+     - port: 80',
        '+       targetPort: 80',
      ]
    )
    assert.ok(lines.includes('+++ written ConfigMap.v1 demo/shop-pages (create)'))
    assert.ok(!stdout.includes('last-applied-configuration'), 'the annotation is left out of diffs')
  })
})
