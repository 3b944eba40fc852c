// Proves what `npm pack` ships, from the tarball itself rather than the tree: the Helm chart with
// its CRDs as real files (a symlink would be dropped by packing) and the kustomize manifests.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'

const run = promisify(execFile)

describe('the packed npm tarball', () => {
  let dir: string
  let files: string[]

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'metactl-pack-'))
    // --ignore-scripts: no build here; dist/ is not what this test is about.
    const { stdout } = await run(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', dir],
      {
        maxBuffer: 64 * 1024 * 1024,
      }
    )
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[]
    assert.ok(packed)
    files = packed.files.map((f) => f.path)
    await run('tar', ['-xzf', join(dir, packed.filename), '-C', dir])
  })

  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('ships the chart CRDs as real files equal to deploy/crds', async () => {
    for (const name of ['compositecontrollers', 'decoratorcontrollers', 'controllerrevisions']) {
      const path = `deploy/helm/metacontroller-ts/crds/${name}.yaml`
      assert.ok(files.includes(path), `${path} is not in the tarball`)
      assert.equal(
        await readFile(join(dir, 'package', path), 'utf8'),
        await readFile(`deploy/crds/${name}.yaml`, 'utf8'),
        path
      )
    }
  })

  it('ships the HA manifests and chart templates', () => {
    for (const path of [
      'deploy/manifests/pdb.yaml',
      'deploy/manifests/rbac-leader-election.yaml',
      'deploy/helm/metacontroller-ts/templates/pdb.yaml',
      'deploy/helm/metacontroller-ts/templates/servicemonitor.yaml',
      'deploy/helm/metacontroller-ts/templates/rbac-leader-election.yaml',
    ])
      assert.ok(files.includes(path), `${path} is not in the tarball`)
  })
})
