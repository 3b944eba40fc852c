import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { parseAllDocuments } from 'yaml'
import { CliError } from '../cli-error.js'
import { parseRelated, rbacCommand } from './rbac-command.js'

const dir = mkdtempSync(join(tmpdir(), 'metactl-rbac-command-'))
after(() => {
  rmSync(dir, { recursive: true, force: true })
})

function file(name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

async function run(args: readonly string[]): Promise<{ out: string; err: string[] }> {
  const out: string[] = []
  const err: string[] = []
  const command = rbacCommand({ out: (l) => out.push(l), err: (l) => err.push(l) })
  command.exitOverride()
  await command.parseAsync([...args], { from: 'user' })
  return { out: out.join('\n'), err }
}

async function refusal(args: readonly string[]): Promise<string> {
  try {
    await run(args)
  } catch (error) {
    assert.ok(error instanceof CliError, `a CliError, not ${String(error)}`)
    return error.message
  }
  assert.fail('expected a CliError')
}

const CUSTOMIZED = `apiVersion: metacontroller.k8s.io/v1alpha1
kind: CompositeController
metadata: {name: web}
spec:
  parentResource: {apiVersion: example.com/v1, resource: webs}
  childResources: [{apiVersion: apps/v1, resource: deployments}]
  hooks:
    sync: {webhook: {url: 'http://hook/sync'}}
    customize: {webhook: {url: 'http://hook/customize'}}
`

describe('metactl rbac', () => {
  it('prints one role per controller of a directory, in file order', async () => {
    const sub = mkdtempSync(join(dir, 'deploy-'))
    writeFileSync(join(sub, 'a.yaml'), CUSTOMIZED)
    writeFileSync(
      join(sub, 'b.yaml'),
      CUSTOMIZED.replace('name: web', 'name: other').replace('webs', 'others')
    )
    writeFileSync(join(sub, 'kustomization.yaml'), 'resources: [a.yaml, b.yaml]\n')
    const { out } = await run(['-f', sub, '--related', 'web=v1:configmaps'])
    const roles = parseAllDocuments(out).map((d) => d.toJS() as Record<string, unknown>)
    const names = roles.map((r) => (r['metadata'] as { name: string }).name)
    assert.deepEqual(names, ['metacontroller-ts:web', 'metacontroller-ts:other'])
    const related = roles.map((r) =>
      (r['rules'] as { resources: string[]; verbs: string[] }[]).filter((rule) =>
        rule.resources.includes('configmaps')
      )
    )
    assert.deepEqual(related, [
      [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch'] }],
      [],
    ])
  })

  it('warns about a customize hook whose related resources are not named', async () => {
    const { err } = await run(['-f', file('customized.yaml', CUSTOMIZED)])
    assert.equal(err.length, 1)
    assert.match(err[0] ?? '', /web: its customize hook .* --related web=v1:configmaps/)
  })

  it('refuses a missing file, a file without controllers and a bad spec, naming each', async () => {
    assert.match(await refusal(['-f', join(dir, 'nope.yaml')]), /nope\.yaml: no such file/)
    const crd = file('crd.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n')
    assert.match(await refusal(['-f', crd]), /no CompositeController or DecoratorController in/)
    const bad = file('bad.yaml', CUSTOMIZED.replace('example.com/v1', 'Example/v1'))
    assert.match(
      await refusal(['-f', bad]),
      /bad\.yaml: CompositeController web: spec\.parentResource\.apiVersion: "Example\/v1"/
    )
    const broken = file('broken.yaml', 'kind: [\n')
    assert.match(await refusal(['-f', broken]), /broken\.yaml/)
  })

  it('refuses --related for a controller that is not there', async () => {
    const path = file('web.yaml', CUSTOMIZED)
    assert.match(
      await refusal(['-f', path, '--related', 'webb=v1:configmaps']),
      /no controller named webb/
    )
  })
})

describe('parseRelated', () => {
  it('reads an optional controller, an apiVersion with or without group, and a resource', () => {
    assert.deepEqual(parseRelated('v1:configmaps'), [{ apiVersion: 'v1', resource: 'configmaps' }])
    assert.deepEqual(parseRelated('web=apps/v1:deployments'), [
      { controller: 'web', apiVersion: 'apps/v1', resource: 'deployments' },
    ])
    assert.throws(() => parseRelated('configmaps'), CliError)
  })
})
