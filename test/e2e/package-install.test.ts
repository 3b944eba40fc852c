// The package as a user gets it: `npm pack` (which builds dist/ through `prepare`), installed
// from the tarball into a fresh project from npm's cache (--prefer-offline: the registry only for
// metadata the cache lacks), then
// `metactl --version`, `metactl init` and the scaffold's own `npm test`, which type-checks,
// unit-tests and runs the controller on the real control plane of this test tier.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'

const exec = promisify(execFile)
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { name: string; version: string }
// The scaffold's own `node --test` must report as a top-level run, not into this test's runner.
const env = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => key !== 'NODE_TEST_CONTEXT')
)
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error']

async function run(
  command: string,
  args: readonly string[],
  cwd: string
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await exec(command, args, { cwd, env, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 })
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string }
    throw new Error(
      `${command} ${args.join(' ')} failed in ${cwd}: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`,
      { cause: error }
    )
  }
}

describe('the packed package', { timeout: 600_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-pack-'))
  let tarball = ''

  before(async () => {
    // Packed from a copy of the checkout (its files, with this checkout's node_modules), so the
    // `prepare` build writes the copy's dist/, not the one other tests are importing.
    const copy = join(work, 'checkout')
    const { stdout: listed } = await run(
      'git',
      ['ls-files', '--cached', '--others', '--exclude-standard', '-z'],
      resolve('.')
    )
    for (const file of listed.split('\0').filter((f) => f !== '' && existsSync(f))) {
      mkdirSync(dirname(join(copy, file)), { recursive: true })
      if (lstatSync(file).isSymbolicLink()) symlinkSync(readlinkSync(file), join(copy, file))
      else copyFileSync(file, join(copy, file))
    }
    symlinkSync(resolve('node_modules'), join(copy, 'node_modules'))
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], copy)
    const [packed] = JSON.parse(stdout) as {
      filename: string
      size: number
      files: { path: string }[]
    }[]
    assert.ok(packed)
    tarball = join(work, packed.filename)
    const paths = packed.files.map((f) => f.path)
    process.stdout.write(
      `# tarball ${packed.filename}: ${(statSync(tarball).size / 1024).toFixed(0)} kB, ${paths.length} files\n`
    )
    // dist/ is what the export map and bin/ point at; the sources and tests stay out.
    for (const needed of [
      'bin/metactl.js',
      'dist/cli/main.js',
      'dist/sdk/index.js',
      'dist/sdk/index.d.ts',
      'deploy/crds/compositecontrollers.yaml',
    ])
      assert.ok(paths.includes(needed), `the tarball holds ${needed}`)
    assert.deepEqual(
      paths.filter((p) => p.startsWith('src/') || p.includes('.test.') || p.endsWith('.map')),
      []
    )
  })

  after(() => {
    rmSync(work, { recursive: true, force: true })
  })

  it('installs from the tarball, runs metactl, scaffolds a project whose npm test passes', async () => {
    const app = join(work, 'app')
    await run('mkdir', ['-p', app], work)
    await run('npm', ['init', '-y'], app)
    await run('npm', ['install', tarball, ...NPM_FLAGS], app)
    const version = await run('npx', ['--no-install', 'metactl', '--version'], app)
    assert.equal(version.stdout.trim(), pkg.version)

    const started = Date.now()
    await run(
      'npx',
      ['--no-install', 'metactl', 'init', 'my-controller', '--package', `file:${tarball}`],
      app
    )
    const project = join(app, 'my-controller')
    await run('npm', ['install', ...NPM_FLAGS], project)
    const test = await run('npm', ['test'], project)
    process.stdout.write(
      `# init -> npm install -> npm test: ${((Date.now() - started) / 1000).toFixed(1)} s\n`
    )
    assert.match(test.stdout, /^# pass 3$/m)
    assert.match(test.stdout, /^# fail 0$/m)
    // The integration test ran on this tier's cluster rather than being skipped.
    assert.match(test.stdout, /^# skipped 0$/m)
  })
})
