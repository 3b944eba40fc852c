// `metactl dev` on a scaffolded project, against this tier's cluster: the hook runs in-process,
// a saved change to src/hook.ts is reloaded and the next sync uses it, and each sync is printed
// as one line of what the engine wrote (created / updated / deleted / unchanged), a rejected
// answer with its reason, a hook error with its source line; a saved manifest applies the CRDs
// and restarts the controllers; a DecoratorController runs beside the CompositeController with
// the hooks exported under its name. The project links metacontroller-ts to this checkout (its
// dist/) instead of installing it; the package-install test covers installing.
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
import type { KubeObject } from '../../src/core/kube-object.js'
import { metactl } from '../support/run-metactl.js'

const REPO = resolve('.')
// A kind of its own, so no other test's engine syncs these parents.
const PARENTS: ResourceRef = {
  group: 'dev.example.com',
  version: 'v1',
  resource: 'reloads',
  namespaced: true,
}
const SECRETS: ResourceRef = { group: '', version: 'v1', resource: 'secrets', namespaced: true }
const SERVICE_ACCOUNTS: ResourceRef = {
  group: '',
  version: 'v1',
  resource: 'serviceaccounts',
  namespaced: true,
}

describe('metactl dev', { timeout: 240_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-dev-'))
  const project = join(work, 'reload-controller')
  const hookFile = join(project, 'src', 'hook.ts')
  const namespace = `dev-${Date.now().toString(36)}`
  let plane: ControlPlane
  let dev: ChildProcess | undefined
  let output = ''
  let original = ''

  /** Waits for a printed line matching `pattern`, printed after `from` characters of output. */
  const line = async (pattern: RegExp, description: string, from = 0): Promise<string> => {
    let found: string | undefined
    await waitFor(
      () => {
        found = output
          .slice(from)
          .split('\n')
          .find((l) => pattern.test(l))
        return found !== undefined
      },
      { timeoutMs: 30_000, description: `${description}; output so far:\n${output}` }
    )
    return found ?? ''
  }

  /** Saves the scaffold's hook changed by `edit`, and waits for dev to reload it. */
  const saveHook = async (edit: (source: string) => string, extra = ''): Promise<number> => {
    const edited = edit(original) + extra
    assert.notEqual(edited, original, 'the scaffold hook has the text this test edits')
    const from = output.length
    writeFileSync(hookFile, edited)
    await line(/reloaded src\/hook\.ts \(src\/hook\.ts changed\)/, 'the hook reload', from)
    return from
  }

  before(async () => {
    plane = await startControlPlane()
    const init = await metactl(['init', project, '--kind', 'Reload', '--group', 'dev.example.com'])
    assert.equal(init.code, 0, init.stderr)
    mkdirSync(join(project, 'node_modules'))
    symlinkSync(REPO, join(project, 'node_modules', 'metacontroller-ts'))
    symlinkSync(join(REPO, 'node_modules', 'tsx'), join(project, 'node_modules', 'tsx'))
    original = readFileSync(hookFile, 'utf8')
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
    await waitFor(
      () => output.includes('dev: serving reload-controller (CompositeController; hooks: sync)'),
      {
        timeoutMs: 60_000,
        description: 'metactl dev to start',
      }
    )
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

  const configMap = async (name = 'hello-0'): Promise<KubeObject | undefined> => {
    try {
      return await plane.client.get(CONFIGMAPS, name, { namespace })
    } catch {
      return undefined
    }
  }
  const sync = (rest: string): RegExp =>
    new RegExp(`\\[reload-controller\\] sync Reload ${namespace}/hello: ${rest}`)

  it('prints what each sync created, then updated, after a hook edit and a spec patch', async () => {
    await plane.client.create(PARENTS, {
      apiVersion: 'dev.example.com/v1',
      kind: 'Reload',
      metadata: { name: 'hello', namespace },
      spec: { message: 'hi', replicas: 1 },
    })
    await line(
      sync('created 1 \\(ConfigMap hello-0\\), updated 0, deleted 0, unchanged 0; status written'),
      'the first sync line'
    )

    const from = await saveHook((source) =>
      source.replace(
        'data: { message: parent.spec.message }',
        "data: { message: parent.spec.message, edited: 'yes' }"
      )
    )
    await line(
      sync('created 0, updated 1 \\(ConfigMap hello-0\\), deleted 0, unchanged 0; status'),
      'the update line of the edited hook',
      from
    )
    const data = (await configMap())?.['data'] as Record<string, string> | undefined
    assert.equal(data?.['edited'], 'yes')

    const patched = output.length
    const parent = await plane.client.get(PARENTS, 'hello', { namespace })
    await plane.client.update(
      PARENTS,
      { ...parent, spec: { message: 'hi', replicas: 2 } },
      { namespace }
    )
    await line(
      sync(
        'created 1 \\(ConfigMap hello-1\\), updated 0, deleted 0, unchanged 1 \\(ConfigMap hello-0\\)'
      ),
      'the line of the spec patch',
      patched
    )
  })

  it('prints a hook error with its source line, and keeps running', async () => {
    await saveHook((source) =>
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

  it('prints a rejected answer with its reason, retries collapsed, and leaves the children alone', async () => {
    const before = await configMap()
    const from = await saveHook((source) =>
      source.replace(
        'children: desired,',
        "children: [...desired, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'stray', namespace: 'kube-system' } }],"
      )
    )
    const reason = sync(
      'answer rejected, nothing written: desired child ConfigMap kube-system/stray is in namespace kube-system, but its parent is in'
    )
    await line(reason, 'the rejection line', from)
    // The engine retries the parent with a growing delay; its repeats are one line with a count.
    await line(new RegExp(`${reason.source}.* \\(x\\d+\\)$`), 'the collapsed retries', from)
    const after = await configMap()
    assert.equal(after?.metadata.resourceVersion, before?.metadata.resourceVersion)
    assert.equal(await configMap('stray'), undefined)

    const malformed = await saveHook((source) =>
      source.replace('children: desired,', "children: 'not a list',")
    )
    await line(
      sync('answer rejected, nothing written: .*children'),
      'the line of a malformed answer',
      malformed
    )
    assert.equal((await configMap())?.metadata.resourceVersion, before?.metadata.resourceVersion)
    // The engine's own log (JSON or zap's console layout) is not interleaved without --verbose.
    assert.doesNotMatch(output, /\{"level"|\tWARN\t|InvalidDesiredChildError/)
  })

  it('applies an edited manifest, restarts the controller and says so', async () => {
    const secret = (source: string): string =>
      source.replace(
        'children: desired,',
        "children: [...desired, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-secret` }, data: { k: 'dg==' } }],"
      )
    const from = await saveHook(secret)
    await line(
      sync(
        'answer rejected, nothing written: desired child Secret hello-secret has type Secret.v1, which is not in childResources'
      ),
      'the Secret refused while undeclared',
      from
    )
    const manifest = join(project, 'deploy', 'controller.yaml')
    const declared = readFileSync(manifest, 'utf8').replace(
      '  childResources:\n',
      '  childResources:\n    - apiVersion: v1\n      resource: secrets\n'
    )
    const broken = output.length
    writeFileSync(manifest, `${declared}\n  - : [\n`)
    await line(
      /reload of the manifests failed \(deploy\/controller\.yaml changed\); the previous controllers keep running: deploy\/controller\.yaml: invalid YAML: .*\S$/,
      'the broken manifest reported',
      broken
    )
    const reloaded = output.length
    writeFileSync(manifest, declared)
    await line(
      /reloaded the manifests \(deploy\/controller\.yaml changed\): restarted reload-controller$/,
      'the manifest reload line',
      reloaded
    )
    await line(sync('created 1 \\(Secret hello-secret\\)'), 'the Secret created', reloaded)
    await plane.client.get(SECRETS, 'hello-secret', { namespace })
  })

  it('runs a DecoratorController with the hooks exported under its name', async () => {
    const decorator = [
      '',
      '/** The hooks of the DecoratorController reload-labeler. */',
      'export const reloadLabeler = {',
      '  sync: ({ object }: { object: { metadata: { name?: string } } }) => ({',
      "    labels: { decorated: 'yes' },",
      "    attachments: [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: `${object.metadata.name ?? ''}-note` } }],",
      '  }),',
      '}',
      '',
    ].join('\n')
    await saveHook((source) => source, decorator)
    const from = output.length
    writeFileSync(
      join(project, 'deploy', 'labeler.yaml'),
      [
        'apiVersion: metacontroller.k8s.io/v1alpha1',
        'kind: DecoratorController',
        'metadata:',
        '  name: reload-labeler',
        'spec:',
        '  resources:',
        '    - apiVersion: dev.example.com/v1',
        '      resource: reloads',
        '  attachments:',
        '    - apiVersion: v1',
        '      resource: serviceaccounts',
        '  hooks:',
        '    sync:',
        '      webhook:',
        '        url: http://unused.invalid/sync',
        '',
      ].join('\n')
    )
    await line(
      /reloaded the manifests \(deploy\/labeler\.yaml changed\): started reload-labeler$/,
      'the decorator started',
      from
    )
    await line(
      new RegExp(
        `\\[reload-labeler\\] sync Reload ${namespace}/hello: created 1 \\(ServiceAccount hello-note\\), updated 0, deleted 0, unchanged 0; target updated`
      ),
      'the decorator sync line',
      from
    )
    const parent = await plane.client.get(PARENTS, 'hello', { namespace })
    assert.equal(parent.metadata.labels?.['decorated'], 'yes')
    await plane.client.get(SERVICE_ACCOUNTS, 'hello-note', { namespace })
  })
})
