// `metactl dev` on a scaffolded project, against this tier's cluster: the hook runs in-process,
// a saved change to src/hook.ts is reloaded and the next sync uses it, and a hook error is
// printed with its source line. The project links metacontroller-ts to this checkout (its dist/)
// instead of installing it; the package-install test covers installing.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import type { ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { CONFIGMAPS, NAMESPACES } from 'metacontroller-ts/kube'
import type { ResourceRef } from 'metacontroller-ts/kube'
import { startControlPlane, waitFor } from 'metacontroller-ts/testing'
import type { ControlPlane } from 'metacontroller-ts/testing'
import { metactl } from '../support/run-metactl.js'

const REPO = resolve('.')
// A kind of its own, so no other test's engine syncs these parents.
const PARENTS: ResourceRef = {
  group: 'dev.example.com',
  version: 'v1',
  resource: 'reloads',
  namespaced: true,
}

describe('metactl dev', { timeout: 180_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-dev-'))
  const project = join(work, 'reload-controller')
  const namespace = `dev-${Date.now().toString(36)}`
  let plane: ControlPlane
  let dev: ChildProcess | undefined
  let output = ''

  before(async () => {
    plane = await startControlPlane()
    const init = await metactl(['init', project, '--kind', 'Reload', '--group', 'dev.example.com'])
    assert.equal(init.code, 0, init.stderr)
    mkdirSync(join(project, 'node_modules'))
    symlinkSync(REPO, join(project, 'node_modules', 'metacontroller-ts'))
    symlinkSync(join(REPO, 'node_modules', 'tsx'), join(project, 'node_modules', 'tsx'))
    dev = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(REPO, 'src/cli/main.ts'),
        'dev',
        '--kubeconfig',
        plane.kubeconfigPath,
      ],
      {
        cwd: project,
        stdio: ['ignore', 'pipe', 'pipe'],
      }
    )
    dev.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    dev.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    await waitFor(() => output.includes('dev: serving reload-controller'), {
      timeoutMs: 60_000,
      description: 'metactl dev to start',
    })
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    })
  })

  after(async () => {
    if (dev?.exitCode === null) {
      const exited = once(dev, 'exit')
      dev.kill('SIGTERM')
      // Ctrl-C or SIGTERM stops the engine and exits cleanly; the cluster is left alone.
      assert.deepEqual(await exited, [0, null])
    }
    await plane.client.delete(NAMESPACES, namespace).catch(() => undefined)
    await plane.stop()
    rmSync(work, { recursive: true, force: true })
  })

  const configMapData = async (): Promise<Record<string, string> | undefined> => {
    try {
      const map = await plane.client.get(CONFIGMAPS, 'hello-0', { namespace })
      return map['data'] as Record<string, string>
    } catch {
      return undefined
    }
  }

  it('syncs with the hook, then with the edited hook after a reload', async () => {
    await plane.client.create(PARENTS, {
      apiVersion: 'dev.example.com/v1',
      kind: 'Reload',
      metadata: { name: 'hello', namespace },
      spec: { message: 'hi', replicas: 1 },
    })
    await waitFor(async () => (await configMapData())?.['message'] === 'hi', {
      timeoutMs: 30_000,
      description: 'the ConfigMap from the first hook',
    })
    assert.match(output, new RegExp(`sync Reload ${namespace}/hello: \\+ConfigMap hello-0; status`))

    const hook = join(project, 'src', 'hook.ts')
    const source = readFileSync(hook, 'utf8')
    const edited = source.replace(
      'data: { message: parent.spec.message }',
      "data: { message: parent.spec.message, edited: 'yes' }"
    )
    assert.notEqual(edited, source, 'the scaffold hook has the line this test edits')
    writeFileSync(hook, edited)
    await waitFor(() => output.includes('reloaded src/hook.ts (src/hook.ts changed)'), {
      timeoutMs: 30_000,
      description: 'the reload',
    })
    await waitFor(async () => (await configMapData())?.['edited'] === 'yes', {
      timeoutMs: 30_000,
      description: 'the next sync to use the edited hook',
    })
  })

  it('prints a hook error with its source line, and keeps running', async () => {
    const hook = join(project, 'src', 'hook.ts')
    const source = readFileSync(hook, 'utf8')
    writeFileSync(
      hook,
      source.replace(
        'const name = parent.metadata.name',
        'const name = (parent.spec as unknown as { no: { x: string } }).no.x + parent.metadata.name'
      )
    )
    await waitFor(
      () =>
        /sync Reload \S+ failed: TypeError: Cannot read properties of undefined \(reading 'x'\)\n\s+at src\/hook\.ts:\d+:\d+/.test(
          output
        ),
      {
        timeoutMs: 30_000,
        description: 'the hook error with its location',
      }
    )
    assert.equal(dev?.exitCode, null)
  })
})
