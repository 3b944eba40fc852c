// Golden tests of `metactl render` as a user runs it: a separate process, offline (no cluster),
// for the fixtures in test/fixtures/render. Its stdout must match the stored golden files; run
// with METACTL_UPDATE_GOLDEN=1 to rewrite them from the current output (then review the diff).
import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { serveHooks } from '../../src/sdk/index.js'
import type { HookServer } from '../../src/sdk/index.js'
import { sync } from '../fixtures/render/hook.js'
import { metactl as runMetactl } from '../support/run-metactl.js'
import type { MetactlResult } from '../support/run-metactl.js'

const FIXTURES = 'test/fixtures/render'
const UPDATE = process.env['METACTL_UPDATE_GOLDEN'] === '1'

type Result = MetactlResult

function metactl(...args: string[]): Promise<Result> {
  return runMetactl(args, { timeoutMs: 60_000 })
}

function fixture(name: string): string {
  return join(FIXTURES, name)
}

const RENDER = [
  'render',
  '--controller',
  fixture('controller.yaml'),
  '--parent',
  fixture('parent.yaml'),
]
const OBSERVED = [
  '--observed',
  fixture('observed.yaml'),
  '--observed',
  fixture('observed-configmaps.yaml'),
]
const HOOK_MODULE = ['--hook-module', fixture('hook.ts')]

/**
 * Compares output with a golden file, or rewrites the file under METACTL_UPDATE_GOLDEN=1.
 *
 * @remarks
 * Text goldens compare byte for byte. JSON goldens compare as JSON values: they are stored
 * formatted by prettier (which checks them), not as the CLI prints them.
 */
async function assertGolden(name: string, actual: string): Promise<void> {
  const path = fixture(name)
  const json = name.endsWith('.json')
  if (UPDATE) {
    let text = actual
    if (json) {
      const prettier = await import('prettier')
      const options = await prettier.resolveConfig(path)
      text = await prettier.format(actual, { ...options, filepath: path })
    }
    writeFileSync(path, text)
  }
  assert.ok(existsSync(path), `no golden file ${path}; create it with METACTL_UPDATE_GOLDEN=1`)
  const golden = readFileSync(path, 'utf8')
  const hint = `${path} differs; if the change is intended, rerun with METACTL_UPDATE_GOLDEN=1`
  if (json) {
    assert.deepEqual(JSON.parse(actual), JSON.parse(golden), hint)
  } else {
    assert.equal(actual, golden, hint)
  }
}

function assertSucceeded(result: Result): void {
  assert.equal(result.code, 0, result.stderr)
  assert.equal(result.stderr, '', 'no warnings for the fixtures')
}

function assertFailed(result: Result, message: RegExp): void {
  assert.equal(result.code, 1, result.stdout + result.stderr)
  assert.equal(result.stdout, '')
  assert.match(result.stderr, message)
}

describe('metactl render', () => {
  it('creates every desired child when nothing is observed', async () => {
    const result = await metactl(...RENDER, ...HOOK_MODULE)
    assertSucceeded(result)
    await assertGolden('create.golden.txt', result.stdout)
  })

  it('recreates, updates, deletes, keeps and skips observed children', async () => {
    const result = await metactl(...RENDER, ...OBSERVED, ...HOOK_MODULE)
    assertSucceeded(result)
    await assertGolden('observed.golden.txt', result.stdout)
  })

  it('prints one JSON object with --output json', async () => {
    const result = await metactl(...RENDER, ...OBSERVED, ...HOOK_MODULE, '--output', 'json')
    assertSucceeded(result)
    const output = JSON.parse(result.stdout) as Record<string, unknown>
    assert.deepEqual(Object.keys(output), [
      'desired',
      'plan',
      'status',
      'resyncAfterSeconds',
      'finalized',
    ])
    await assertGolden('observed.golden.json', result.stdout)
  })

  it('calls the finalize export with --finalizing', async () => {
    const result = await metactl(...RENDER, ...OBSERVED, ...HOOK_MODULE, '--finalizing')
    assertSucceeded(result)
    await assertGolden('finalizing.golden.txt', result.stdout)
  })

  describe('with a hook URL', () => {
    let server: HookServer
    const requests: unknown[] = []

    before(async () => {
      server = await serveHooks(
        {
          '/sync': (request: Parameters<typeof sync>[0]) => {
            requests.push(request)
            return sync(request)
          },
          '/broken': () => {
            throw new Error('the hook broke')
          },
        },
        { port: 0, host: '127.0.0.1', log: () => undefined }
      )
    })

    after(async () => {
      await server.close()
    })

    it('POSTs the request in the hooks.sync.version format and renders the same', async () => {
      const result = await metactl(...RENDER, ...OBSERVED, '--hook-url', `${server.url}/sync`)
      assertSucceeded(result)
      await assertGolden('observed.golden.txt', result.stdout)
      assert.equal(requests.length, 1)
      const request = requests[0] as {
        parent: { metadata: { uid?: string } }
        children: Record<string, Record<string, unknown>>
        finalizing: boolean
      }
      assert.equal(request.parent.metadata.uid, '00000000-0000-0000-0000-render0000000')
      assert.equal(request.finalizing, false)
      // v2 keys (namespace/name), one entry per declared rule.
      assert.deepEqual(
        Object.fromEntries(
          Object.entries(request.children).map(([type, objects]) => [
            type,
            Object.keys(objects).sort(),
          ])
        ),
        {
          'ConfigMap.v1': ['demo/shop-legacy', 'demo/shop-pages'],
          'Pod.v1': ['demo/shop-old', 'demo/shop-web'],
          'Service.v1': ['demo/shop'],
        }
      )
    })

    it('fails with the hook error when the hook answers 500', async () => {
      const url = `${server.url}/broken`
      assertFailed(
        await metactl(...RENDER, '--hook-url', url),
        new RegExp(
          `^metactl: hook ${url} \\(v2\\) failed: unsupported status code: 500 body: .*the hook broke`
        )
      )
    })
  })

  describe('errors', () => {
    it('names a hook module that does not exist', async () => {
      assertFailed(
        await metactl(...RENDER, '--hook-module', fixture('no-such-hook.ts')),
        /^metactl: --hook-module test\/fixtures\/render\/no-such-hook\.ts: no such file \(looked for \/.*no-such-hook\.ts\)\n$/
      )
    })

    it('lists the exports when the named export is missing', async () => {
      assertFailed(
        await metactl(...RENDER, '--hook-module', `${fixture('hook.ts')}#nope`),
        /^metactl: --hook-module test\/fixtures\/render\/hook\.ts#nope: export nope is not a hook function nor an object \{ sync, finalize\?, customize\? \} \(exports: finalize, sync, undeclared\)/
      )
    })

    it('rejects desired children of an undeclared type', async () => {
      assertFailed(
        await metactl(...RENDER, '--hook-module', `${fixture('hook.ts')}#undeclared`),
        /^metactl: hook test\/fixtures\/render\/hook\.ts#undeclared returned invalid children: desired child Secret token has type Secret\.v1, which is not in childResources/
      )
    })

    it('rejects a parent of another resource, and a missing manifest', async () => {
      assertFailed(
        await metactl(
          'render',
          '--controller',
          fixture('controller.yaml'),
          '--parent',
          fixture('controller.yaml'),
          ...HOOK_MODULE
        ),
        /^metactl: --parent test\/fixtures\/render\/controller\.yaml: CompositeController website \(metacontroller\.k8s\.io\/v1alpha1\) is not the controller's parent resource \(example\.com\/v1 websites\)\n$/
      )
      assertFailed(
        await metactl(
          'render',
          '--controller',
          fixture('missing.yaml'),
          '--parent',
          fixture('parent.yaml'),
          ...HOOK_MODULE
        ),
        /^metactl: --controller test\/fixtures\/render\/missing\.yaml: no such file\n$/
      )
    })

    it('needs exactly one of --hook-url and --hook-module', async () => {
      assertFailed(
        await metactl(...RENDER),
        /^metactl: give exactly one of --hook-url and --hook-module\n$/
      )
    })
  })
})
