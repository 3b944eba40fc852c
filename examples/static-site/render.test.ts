// `metactl render` on the StaticSite sample, with the TypeScript hook module: the plan creates the
// three children, and the rendered children fed back as --observed plan nothing.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { metactl } from '../../test/support/run-metactl.js'

const ARGS = [
  'render',
  '--controller',
  'examples/static-site/controller.yaml',
  '--parent',
  'examples/static-site/sample.yaml',
  '--hook-module',
  'examples/static-site/hook.ts#sync',
]

describe('metactl render on the StaticSite example', () => {
  const work = mkdtempSync(join(tmpdir(), 'static-site-render-'))
  after(() => {
    rmSync(work, { recursive: true, force: true })
  })

  it('plans the ConfigMap, the Deployment and the Service, and the status', async () => {
    const { code, stdout, stderr } = await metactl(ARGS)
    assert.equal(code, 0, stderr)
    assert.match(stdout, /^# {3}create {5}ConfigMap\.v1 default\/hello-content$/m)
    assert.match(stdout, /^# {3}create {5}Deployment\.apps\/v1 default\/hello$/m)
    assert.match(stdout, /^# {3}create {5}Service\.v1 default\/hello$/m)
    assert.match(stdout, /^# {3}url: http:\/\/hello\.default\.svc$/m)
    assert.match(stdout, /^# {3}ready: false$/m)

    const observed = join(work, 'observed.yaml')
    writeFileSync(observed, stdout)
    const again = await metactl([...ARGS, '--observed', observed])
    assert.equal(again.code, 0, again.stderr)
    assert.doesNotMatch(again.stdout, /^# {3}(?:create|update|recreate|delete) /m)
    assert.equal((again.stdout.match(/^# {3}unchanged /gm) ?? []).length, 3)
  })
})
