// Runs the shell commands of the README's "Write your first controller in 5 minutes" as a new
// user would: in a fresh clone (of this repository's committed HEAD, instead of the URL), with a
// fresh HOME, so `npm ci`, `metactl init`, the scaffold's `npm install` and `npm test`, `metactl
// dev` (its own local cluster, in ~/.local/state), the kubectl commands and `metactl tree` all run
// as written. It starts as a new machine does, without the local cluster's binaries (the harness's
// METACTL_CONTROLPLANE_BIN and METACTL_KWOK_BIN point at an empty directory): the first command
// that fails must name the one command that fixes it, `npx metactl cluster install`; that command
// is then run against the already-built binaries (so it builds nothing: a cold build takes 16
// minutes) and the flow goes on from the failed command. Deviations, all outside the README's
// text: the clone URL is this checkout; `metactl dev`, which the README leaves running in a
// terminal, runs in the background; npm uses the real npm cache (prefer-offline).
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { defaultBinaryDir, defaultKwokPath, waitFor } from 'metacontroller-ts/testing'

const exec = promisify(execFile)
const REPO = resolve('.')

/** The fenced block after `<!-- readme-test: NAME -->` in README.md. */
function readmeBlock(name: string): string[] {
  const text = readFileSync('README.md', 'utf8')
  const start = text.indexOf(`<!-- readme-test: ${name} -->`)
  assert.ok(start >= 0, `README.md has no block ${name}`)
  const match = /```sh\n([\s\S]*?)```/.exec(text.slice(start))
  assert.ok(match?.[1] !== undefined, `README.md block ${name} is not a sh block`)
  return match[1].trimEnd().split('\n')
}

describe('README: write your first controller in 5 minutes', { timeout: 900_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-readme-'))
  const home = join(work, 'home')
  const env: NodeJS.ProcessEnv = {
    ...Object.fromEntries(
      Object.entries(process.env).filter(
        ([key]) =>
          ![
            'KUBECONFIG',
            'METACTL_USE_EXISTING_CLUSTER',
            'NODE_TEST_CONTEXT',
            'NODE_OPTIONS',
          ].includes(key) && !key.startsWith('XDG_')
      )
    ),
    HOME: home,
    npm_config_cache: process.env['npm_config_cache'] ?? join(homedir(), '.npm'),
    npm_config_prefer_offline: 'true',
    METACTL_CONTROLPLANE_BIN: join(work, 'no-binaries'),
    METACTL_KWOK_BIN: join(work, 'no-binaries', 'kwok'),
  }
  const withBinaries = (): void => {
    env['METACTL_CONTROLPLANE_BIN'] = defaultBinaryDir()
    env['METACTL_KWOK_BIN'] = defaultKwokPath()
  }
  let dev: ChildProcess | undefined
  let project = ''

  const bash = async (lines: readonly string[], cwd: string): Promise<string> => {
    try {
      const { stdout, stderr } = await exec('bash', ['-euo', 'pipefail', '-c', lines.join('\n')], {
        cwd,
        env,
        timeout: 600_000,
        maxBuffer: 64 * 1024 * 1024,
      })
      return stdout + stderr
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string }
      throw new Error(
        `README commands failed:\n${lines.join('\n')}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`,
        {
          cause: error,
        }
      )
    }
  }

  after(async () => {
    if (dev?.pid !== undefined && dev.exitCode === null && dev.signalCode === null) {
      try {
        process.kill(-dev.pid, 'SIGKILL')
      } catch {
        // The group is already gone.
      }
    }
    // Whatever happened, stop the cluster dev started under the fake HOME.
    if (project !== '') await bash(['npx metactl cluster down'], project).catch(() => undefined)
    rmSync(work, { recursive: true, force: true })
  })

  it('goes from a clone to a controller syncing on a local cluster, as written', async () => {
    mkdirSync(home)
    const setup = readmeBlock('first-controller-setup')
    const clone = setup.findIndex((line) => line.startsWith('git clone '))
    const devLine = setup.findIndex((line) => /^npx metactl dev\b/.test(line))
    assert.ok(
      clone === 0 && devLine === setup.length - 1,
      'the block starts with git clone and ends with dev'
    )
    const script = setup
      .slice(0, devLine)
      .map((line, i) =>
        i === clone ? line.replace(/https:\/\/\S+/, `${REPO} metacontroller-ts`) : line
      )
    const step = (text: string): void => {
      process.stdout.write(`# ${text}\n`)
    }
    const begun = Date.now()
    // The line that fails first, by number: the trap is line 1, the README's first line is 2.
    const failed = await bash(
      ['trap \'echo "readme-failed-line $LINENO" >&2\' ERR', ...script],
      work
    ).then(
      (out) => ({ line: -1, out }),
      (error: unknown) => {
        const text = error instanceof Error ? error.message : String(error)
        const line = Number(/readme-failed-line (\d+)/.exec(text)?.[1] ?? 0) - 2
        return { line, out: text }
      }
    )
    project = join(work, 'my-controller')
    const cdProject = script.findIndex((line) => line.startsWith('cd ../my-controller'))
    assert.ok(failed.line > cdProject, `the first failure is in the project:\n${failed.out}`)
    assert.match(script[failed.line] ?? '', /^npm test\b/, 'npm test is the first command to fail')
    assert.match(
      failed.out,
      /the local cluster's binaries are missing from \S+: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok\. Install them with `npx metactl cluster install`/
    )
    step(`clone to the failing npm test: ${((Date.now() - begun) / 1000).toFixed(0)} s`)

    withBinaries()
    const installed = await bash(['npx metactl cluster install'], project)
    assert.match(installed, /binaries are installed .*nothing to build/)
    await bash(script.slice(failed.line), project)
    step(`npm test again, after the install: ${((Date.now() - begun) / 1000).toFixed(0)} s`)

    let output = ''
    // Its own process group, so that Ctrl-C can be sent as a terminal sends it: to npx and
    // the metactl it runs alike.
    dev = spawn('npx', ['metactl', 'dev'], {
      cwd: project,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    dev.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    dev.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    await waitFor(() => output.includes('dev: serving my-controller'), {
      timeoutMs: 180_000,
      description: 'metactl dev to serve the project',
    })
    assert.match(
      output,
      /dev: export KUBECONFIG=.*\/\.local\/state\/metacontroller-ts\/cluster\/kubeconfig/
    )

    step(`dev serving after ${((Date.now() - begun) / 1000).toFixed(0)} s`)
    const tried = await bash(readmeBlock('first-controller-try'), project)
    step(`kubectl apply to tree: done after ${((Date.now() - begun) / 1000).toFixed(0)} s`)
    assert.match(tried, /^default +Greeting\/hello +True/m)
    assert.match(tried, /├─ConfigMap\/hello-0/)
    assert.match(tried, /└─ConfigMap\/hello-1/)
    assert.match(
      output,
      /\[my-controller\] sync Greeting default\/hello: created 2 \(ConfigMap hello-0, ConfigMap hello-1\)/
    )

    const exited = once(dev, 'exit')
    if (dev.pid !== undefined) process.kill(-dev.pid, 'SIGINT')
    const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null]
    assert.ok(
      code === 0 || signal === 'SIGINT',
      `dev ended with ${String(code ?? signal)}:\n${output}`
    )
    assert.doesNotMatch(output, /failed|Error/)
    const stopped = await bash(readmeBlock('first-controller-stop'), project)
    assert.match(stopped, /stopped kube-apiserver/)
  })
})
