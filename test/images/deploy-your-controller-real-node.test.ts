// docs/deploy-your-controller.md as a user outside this repository follows it, on the local
// cluster's real node: the package packed from this checkout is installed into a fresh directory,
// its `metactl init` makes the project (vendoring the installed package), and a copy of the
// checkout sits next to it as `../metacontroller-ts`. Then every command block the page marks
// `<!-- deploy-test: NAME -->` runs unchanged with bash in the project, in the page's order: the
// cluster comes up, the hook and engine images are built from their Dockerfiles by the package's
// builder and loaded into the node, the engine and `deploy/` are applied, and the sample's status
// becomes what the hook computes. The engine's own metrics show it called the hook at its Service
// name (a DNS lookup, answered by the cluster's CoreDNS), and `cluster down` leaves no process,
// cgroup or directory of the cluster. Root, `make node`, the builder of `make images`.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs'
import { readFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { readControlPlaneState } from '../../src/cluster/control-plane-state.js'
import { realNodeLayout } from '../../src/cluster/real-node/real-node-layout.js'
import { readRealNodeState } from '../../src/cluster/real-node/real-node-state.js'
import type { RealNodeState } from '../../src/cluster/real-node/real-node-state.js'
import { packCheckout } from '../support/pack-checkout.js'

const exec = promisify(execFile)
const PAGE = 'docs/deploy-your-controller.md'
const HOOK_URL = 'http://my-controller-hook.metacontroller/sync'

/** The lines of the fenced block after `<!-- deploy-test: NAME -->` in the page. */
function docBlock(name: string): string[] {
  const text = readFileSync(PAGE, 'utf8')
  const start = text.indexOf(`<!-- deploy-test: ${name} -->`)
  assert.ok(start >= 0, `${PAGE} has no block ${name}`)
  const match = /```sh\n([\s\S]*?)```/.exec(text.slice(start))
  assert.ok(match?.[1] !== undefined)
  return match[1].trimEnd().split('\n')
}

/** Pids of processes whose network namespace is `netns` (`net:[inode]`). */
function processesIn(netns: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${Number(pid)}/ns/net`) === netns && alive(Number(pid))
      } catch {
        return false // gone meanwhile, or not ours to read
      }
    })
    .map(Number)
}

// A zombie counts as gone: it has exited and waits only for its parent (here often PID 1, which
// reaps late) to collect its status.
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}

describe(`${PAGE} on the real node, from the packed package`, { timeout: 40 * 60_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'metactl-deploy-rn-'))
  const app = join(work, 'app')
  const project = join(app, 'my-controller')
  // `metactl cluster`'s default directory, this test's own: $XDG_STATE_HOME/metacontroller-ts/cluster.
  const stateHome = join(work, 'state')
  const clusterDir = join(stateHome, 'metacontroller-ts', 'cluster')
  const env: NodeJS.ProcessEnv = {
    // The scaffold's npm scripts must not report into this test's runner.
    ...Object.fromEntries(
      Object.entries(process.env).filter(([key]) => key !== 'NODE_TEST_CONTEXT')
    ),
    XDG_STATE_HOME: stateHome,
    npm_config_cache: process.env['npm_config_cache'] ?? join(homedir(), '.npm'),
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  }
  delete env['KUBECONFIG']
  let up = false

  // Runs `lines` as one bash script in `cwd`; resolves with stdout and stderr together.
  const bash = async (lines: readonly string[], cwd = project): Promise<string> => {
    const started = Date.now()
    try {
      const { stdout, stderr } = await exec('bash', ['-euo', 'pipefail', '-c', lines.join('\n')], {
        cwd,
        env,
        timeout: 15 * 60_000,
        maxBuffer: 64 * 1024 * 1024,
      })
      return stdout + stderr
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string }
      throw new Error(`failed:\n${lines.join('\n')}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`, {
        cause: error,
      })
    } finally {
      const first = lines[0] ?? ''
      process.stdout.write(`# ${((Date.now() - started) / 1000).toFixed(1)} s: ${first}\n`)
    }
  }
  const kubectl = async (...args: string[]): Promise<string> => {
    const { stdout } = await exec('kubectl', args, { env, maxBuffer: 16 * 1024 * 1024 })
    return stdout
  }

  before(async () => {
    mkdirSync(app, { recursive: true })
    const packed = await packCheckout(join(app, 'metacontroller-ts'), work)
    for (const script of ['tools/images/build.sh', 'tools/images/buildah.sh', 'bin/metactl.js']) {
      assert.ok(packed.files.includes(script), `the package ships ${script}`)
    }
    await bash(['npm init -y >/dev/null', `npm install ${packed.tarball}`], app)
    await bash(['npx --no-install metactl init my-controller'], app)
  })

  after(async () => {
    if (up) await bash(['npx metactl cluster down'], project).catch(() => undefined)
    rmSync(work, { recursive: true, force: true })
  })

  it('starts the cluster with the page’s command; its printed kubeconfig reaches the node', async () => {
    const output = await bash(docBlock('cluster'))
    up = true
    const exported = /^export KUBECONFIG=(\S+)$/m.exec(output)?.[1]
    assert.ok(exported !== undefined, output)
    env['KUBECONFIG'] = exported // what the page tells the user to run
    assert.equal(exported, join(clusterDir, 'kubeconfig'))
    assert.match(await kubectl('get', 'nodes', '-o', 'name'), /^node\/metactl-real-node$/m)
  })

  it('builds the hook image from the project’s Dockerfile and loads it', async () => {
    const output = await bash(docBlock('build'))
    assert.match(output, /^loaded docker\.io\/library\/my-controller-hook:dev$/m)
  })

  it('builds the engine image from the checkout’s Dockerfile, loads it and installs it', async () => {
    const output = await bash(docBlock('engine-image'))
    assert.match(output, /^loaded ghcr\.io\/metacontroller-ts\/metacontroller-ts:0\.1\.0$/m)
    await bash(docBlock('engine'))
    await bash(docBlock('apply'))
    // The aggregation controller fills the engine's ClusterRole a moment after the apply.
    const deadline = Date.now() + 60_000
    let answers = ''
    while (Date.now() < deadline && answers !== 'yes\nyes') {
      answers = (await bash(docBlock('check').map((line) => `${line} || true`))).trim()
    }
    assert.equal(answers, 'yes\nyes')
  })

  it('makes the sample’s status what the hook computes, the hook called at its Service name', async () => {
    const output = await bash(docBlock('try'))
    assert.match(output, /^greeting\.example\.com\/hello condition met$/m)
    const status = JSON.parse(
      await kubectl('get', 'greeting', 'hello', '-n', 'default', '-o', 'jsonpath={.status}')
    ) as { configMaps?: number; ready?: boolean }
    assert.equal(status.configMaps, 2)
    assert.equal(status.ready, true)
    const pods = JSON.parse(
      await kubectl(
        'get',
        'pods',
        '-n',
        'metacontroller',
        '-l',
        'app.kubernetes.io/component=engine',
        '-o',
        'json'
      )
    ) as { items: { metadata: { name: string }; spec: Record<string, unknown> }[] }
    assert.equal(pods.items.length, 2)
    let calls = 0
    let lookups = 0
    for (const pod of pods.items) {
      assert.equal(pod.spec['hostAliases'], undefined)
      const metrics = await kubectl(
        'get',
        '--raw',
        `/api/v1/namespaces/metacontroller/pods/${pod.metadata.name}:9999/proxy/metrics`
      )
      for (const line of metrics.split('\n')) {
        if (!line.includes(`url="${HOOK_URL}"`)) continue
        const value = Number(line.split(' ').at(-1))
        if (line.startsWith('metacontroller_sync_requests_total{') && line.includes('code="200"'))
          calls += value
        if (line.startsWith('metacontroller_sync_dns_duration_histogram_seconds_count{'))
          lookups += value
      }
    }
    // The leader called the hook by the Service's name and looked that name up (the engine's Pods
    // have no hostAliases: the cluster's DNS answered).
    assert.ok(calls >= 1, `no successful call to ${HOOK_URL} in the engine's metrics`)
    assert.ok(lookups >= 1, `no DNS lookup for ${HOOK_URL} in the engine's metrics`)
  })

  it('stops everything with `cluster down`: no process, cgroup or directory of it is left', async () => {
    const node = readRealNodeState(realNodeLayout(clusterDir).stateFile)
    assert.ok(node !== undefined, 'the real node recorded its state')
    const plane = readControlPlaneState(clusterDir)
    const pids = [...node.processes, ...(plane?.processes ?? [])].map((p) => p.pid)
    assert.ok(processesIn(node.netns).length > 0, 'containers run in the cluster namespace')
    const output = await bash(docBlock('down'))
    up = false
    assert.match(output, /^namespaces, cgroup and mounts removed$/m)
    // Killed processes may take a moment to exit after `down` returns.
    assert.deepEqual(await emptied(() => processesIn(node.netns)), [])
    assert.deepEqual(await emptied(() => pids.filter(alive)), [])
    assert.deepEqual(leftPaths(node), [])
    assert.equal(existsSync(realNodeLayout(clusterDir).stateFile), false)
  })
})

/** Polls `list` for up to 10 s until it is empty; resolves with its last value. */
async function emptied(list: () => number[]): Promise<number[]> {
  const deadline = Date.now() + 10_000
  let left = list()
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(250)
    left = list()
  }
  return left
}

/** The cluster's cgroup directories and tmpfs mount points that still exist. */
function leftPaths(node: RealNodeState): string[] {
  const cgroups = node.cgroupMounts.map((mount) => join(mount, node.cgroupRoot))
  return [...cgroups, ...node.createdDirs].filter((path) => existsSync(path))
}
