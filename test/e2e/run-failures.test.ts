// How `metactl run` fails, as a user meets it: bad flags, an unreachable API server, a signal
// during start-up, and a parent process that dies (the `npx metactl run &` case).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { findFreePort } from '../../src/cluster/free-port.js'
import { waitFor } from '../../src/testing/index.js'
import { metactl } from '../support/run-metactl.js'
import { spawnEngine } from '../support/spawned-engine.js'

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => {
      resolve(false)
    })
  })
}

/** Whether `pid` runs; an exited orphan nobody reaped yet (a zombie) does not count. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return false
  }
}

describe('metactl run failures', () => {
  let dir: string
  let unreachable: string

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'metactl-run-failures-'))
    // A port nobody listens on: every connection is refused at once.
    const port = await findFreePort()
    unreachable = join(dir, 'kubeconfig')
    await writeFile(
      unreachable,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:' + String(port) + '"}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: c, context: {cluster: c, user: u}}]',
        'current-context: c',
        '',
      ].join('\n')
    )
  })

  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('rejects a bad selector in one line with exit code 2, before reading the kubeconfig', async () => {
    const result = await metactl([
      'run',
      '--kubeconfig',
      join(dir, 'does-not-exist'),
      '--target-label-selector',
      'a in (',
    ])
    assert.equal(result.code, 2)
    const lines = result.stderr.trim().split('\n')
    assert.equal(lines.length, 1, result.stderr)
    assert.match(
      lines[0] ?? '',
      /^metactl: --target-label-selector "a in \(" is not a label selector/
    )
  })

  it('exits non-zero within 60 s with one line and no listening port when the API server is unreachable', async () => {
    const [metrics, probes] = [await findFreePort(), await findFreePort()]
    const started = Date.now()
    const result = await metactl(
      [
        'run',
        '--kubeconfig',
        unreachable,
        '--metrics-address',
        `127.0.0.1:${metrics}`,
        '--health-probe-bind-address',
        `127.0.0.1:${probes}`,
      ],
      { timeoutMs: 90_000 }
    )
    const tookMs = Date.now() - started
    assert.equal(result.code, 1, result.stderr)
    assert.ok(tookMs < 60_000, `took ${tookMs} ms`)
    const human = result.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{'))
    assert.deepEqual(human.length, 1, result.stderr)
    assert.match(human[0] ?? '', /^metactl: cannot start: cannot reach the API server at https:/)
    assert.doesNotMatch(result.stderr, /^\s+at /m, 'no stack trace')
    for (const line of result.stderr.split('\n').filter((l) => l.startsWith('{')))
      assert.doesNotThrow(() => JSON.parse(line), line)
    assert.equal(await listening(metrics), false)
    assert.equal(await listening(probes), false)
  })

  it('drains and exits within 5 s on SIGTERM during start-up', async () => {
    const engine = spawnEngine(unreachable, [])
    try {
      await engine.line('API server not reachable yet', 30_000)
      const sent = Date.now()
      engine.process.kill('SIGTERM')
      const code = await engine.exited
      assert.ok(Date.now() - sent < 5000, `exited ${Date.now() - sent} ms after SIGTERM`)
      assert.equal(code, 0)
      assert.ok(engine.lines.some((l) => l['msg'] === 'stopped'))
      assert.deepEqual(engine.raw, [], 'nothing but JSON on stderr')
    } finally {
      engine.kill()
    }
  })

  it('exits when the process that started it dies (npx killed)', async () => {
    // A stand-in for npx: starts the engine and is then SIGKILLed, leaving the engine orphaned.
    const launcher = spawn(
      process.execPath,
      [
        '-e',
        `const { spawn } = require('node:child_process')
         const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'run',
           '--kubeconfig', ${JSON.stringify(unreachable)}, '--metrics-address', '0',
           '--health-probe-bind-address', '0'], { stdio: 'ignore' })
         console.log(child.pid)
         setInterval(() => undefined, 1000)`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] }
    )
    let output = ''
    launcher.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    const pid = await waitFor(() => (/^(\d+)\n/.exec(output) ? Number(output.trim()) : undefined), {
      timeoutMs: 10_000,
      description: 'the engine pid',
    })
    try {
      // Let it get past start-up of the CLI itself.
      await new Promise((resolve) => setTimeout(resolve, 3000))
      assert.ok(alive(pid))
      launcher.kill('SIGKILL')
      await waitFor(() => !alive(pid), { timeoutMs: 10_000, description: 'the orphan to exit' })
    } finally {
      if (alive(pid)) process.kill(pid, 'SIGKILL')
      launcher.kill('SIGKILL')
    }
  })
})
