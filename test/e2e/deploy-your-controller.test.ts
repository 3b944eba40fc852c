// docs/deploy-your-controller.md, run as written on a scaffolded project, without a container
// runtime (building the image itself is issue 21's): the Dockerfile's build stage is replayed in a
// directory holding only what its COPY lines bring in (its own build context), so a dependency
// outside the project fails here as it would in `docker build`; then the page's kubectl commands
// install our engine's manifests and the project's Kustomize base on a local cluster of this
// test's own (it applies cluster-wide objects with fixed names), and the engine's ServiceAccount
// is allowed to write the project's children and status through the aggregated ClusterRole.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { startControlPlane, waitFor } from 'metacontroller-ts/testing'
import type { ControlPlane } from 'metacontroller-ts/testing'
import { metactl } from '../support/run-metactl.js'

const exec = promisify(execFile)
const REPO = resolve('.')

/** The fenced block after `<!-- deploy-test: NAME -->` in the docs page. */
function docBlock(name: string): string[] {
  const text = readFileSync('docs/deploy-your-controller.md', 'utf8')
  const start = text.indexOf(`<!-- deploy-test: ${name} -->`)
  assert.ok(start >= 0, `the page has no block ${name}`)
  const match = /```sh\n([\s\S]*?)```/.exec(text.slice(start))
  assert.ok(match?.[1] !== undefined)
  return match[1].trimEnd().split('\n')
}

/** The build stage of a Dockerfile: its COPY sources (relative to the context) and RUN lines. */
function buildStage(dockerfile: string): { copies: string[][]; runs: string[] } {
  const stage = dockerfile.split(/^FROM /m)[1] ?? ''
  const copies: string[][] = []
  const runs: string[] = []
  for (const line of stage.split('\n')) {
    const copy = /^COPY (?!--from)(.+)$/.exec(line)
    if (copy?.[1] !== undefined) copies.push(copy[1].trim().split(/\s+/).slice(0, -1))
    const run = /^RUN (.+)$/.exec(line)
    if (run?.[1] !== undefined) runs.push(run[1])
  }
  return { copies, runs }
}

describe('docs/deploy-your-controller.md', { timeout: 600_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-deploy-'))
  const project = join(work, 'my-controller')
  let plane: ControlPlane | undefined
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    npm_config_cache: process.env['npm_config_cache'] ?? join(homedir(), '.npm'),
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  }
  const bash = async (lines: readonly string[], cwd: string): Promise<string> => {
    try {
      const { stdout, stderr } = await exec('bash', ['-euo', 'pipefail', '-c', lines.join('\n')], {
        cwd,
        env,
        timeout: 300_000,
        maxBuffer: 64 * 1024 * 1024,
      })
      return stdout + stderr
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string }
      throw new Error(`failed:\n${lines.join('\n')}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`, {
        cause: error,
      })
    }
  }

  before(async () => {
    const init = await metactl(['init', project])
    assert.equal(init.code, 0, init.stderr)
    // The page's engine path, ../metacontroller-ts, is this checkout.
    symlinkSync(REPO, join(work, 'metacontroller-ts'))
  })

  after(async () => {
    await plane?.stop()
    rmSync(work, { recursive: true, force: true })
  })

  it('builds the hook image from its own context (the Dockerfile build stage, replayed)', async () => {
    await bash(['npm install'], project)
    const { copies, runs } = buildStage(readFileSync(join(project, 'Dockerfile'), 'utf8'))
    assert.ok(copies.flat().includes('vendor'), 'the build stage copies vendor/')
    const context = join(work, 'image-build')
    mkdirSync(context)
    for (const sources of copies) {
      for (const source of sources) {
        mkdirSync(dirname(join(context, source)), { recursive: true })
        cpSync(join(project, source), join(context, source), { recursive: true })
      }
    }
    await bash(runs, context)
    assert.ok(readFileSync(join(context, 'dist', 'server.js'), 'utf8').includes('serveHooks'))
  })

  it('applies the engine and the Kustomize base; the engine may write the children', async () => {
    const started = await startControlPlane({ useExistingCluster: false })
    plane = started
    env['KUBECONFIG'] = started.kubeconfigPath
    await bash(docBlock('engine'), project)
    const applied = await bash(docBlock('apply'), project)
    assert.match(applied, /kind: ClusterRole\n/)
    assert.match(applied, /metacontroller-ts\.dev\/aggregate-to-controllers: "true"/)
    assert.match(
      applied,
      /clusterrole\.rbac\.authorization\.k8s\.io\/metacontroller-ts:my-controller created/
    )
    assert.match(applied, /compositecontroller\.metacontroller\.k8s\.io\/my-controller created/)
    // The aggregation controller fills the engine's ClusterRole a moment after the apply.
    const answers = await waitFor(
      async () => {
        const out = await bash(
          docBlock('check').map((line) => `${line} || true`),
          project
        )
        return /^yes\nyes$/.test(out.trim()) ? out : undefined
      },
      { timeoutMs: 60_000, description: 'kubectl auth can-i to say yes twice' }
    )
    assert.equal(answers.trim(), 'yes\nyes')
  })
})
