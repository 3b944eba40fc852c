// Proves the published shape of the package: every subpath in package.json resolves from dist/
// and exports what the docs promise, and the built CLI starts and explains itself.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'

const exec = promisify(execFile)
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { exports: Record<string, unknown> }

describe('package exports', () => {
  it('resolves every subpath export from the built files', async () => {
    const expected: Record<string, string[]> = {
      '.': ['defineCompositeHook', 'serveHooks', 'inProcessHooks', 'callCompositeHook'],
      './engine': ['Engine', 'applyUpdate'],
      './runtime': ['Informer', 'WorkQueue', 'ControllerLoop', 'SharedInformers'],
      './kube': ['KubeTransport', 'DynamicClient', 'Discovery', 'loadClusterConfig'],
      './testing': ['startControlPlane', 'waitFor'],
    }
    const subpaths = Object.keys(pkg.exports).filter((s) => s !== './package.json')
    assert.deepEqual(subpaths.sort(), Object.keys(expected).sort())
    for (const subpath of subpaths) {
      // Import the file the export map names: it must exist in dist/ and export the API.
      const target = (pkg.exports[subpath] as { import: string }).import
      const module = (await import(pathToFileURL(resolve(target)).href)) as Record<string, unknown>
      for (const name of expected[subpath] ?? []) {
        assert.equal(typeof module[name], 'function', `${subpath} exports ${name}`)
      }
    }
  })

  it('ships a CLI whose help lists its commands', async () => {
    const { stdout } = await exec(process.execPath, ['bin/metactl.js', '--help'])
    for (const command of ['run', 'cluster'])
      assert.match(stdout, new RegExp(`^\\s+${command}\\b`, 'm'))
    const run = await exec(process.execPath, ['bin/metactl.js', 'run', '--help'])
    for (const flag of [
      '--kubeconfig',
      '--workers',
      '--discovery-interval',
      '--client-go-qps',
      '--target-label-selector',
    ]) {
      assert.ok(run.stdout.includes(flag), `run --help mentions ${flag}`)
    }
  })
})
