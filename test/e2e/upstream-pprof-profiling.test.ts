// Upstream's `pprof-profiling` example (test/fixtures/upstream-examples/pprof-profiling, vendored
// unchanged) against `metactl run`: its Service manifest applies unchanged; `go tool pprof -top 20
// .../debug/pprof/heap` fails while profiling is off and succeeds once the engine runs with the
// arguments of the example's args.yaml patch (`--zap-devel --zap-log-level=5
// --discovery-interval=5s --pprof-address=:6060`).
//
// What stands in for the cluster: test.sh runs the pprof client in a `golang:alpine` Pod through
// the Service, and rolls the StatefulSet out with the patched arguments; the local control plane
// runs no containers, so the engine runs on the host with those arguments and pprof reads it
// directly. The one argument changed is the listen host: `:6060` is the Pod's own network in the
// cluster, so here it is loopback on a free port (the Service's targetPort is checked to be the
// example's port).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { parse } from 'yaml'
import { request } from 'undici'
import { findFreePort, startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { lockCluster } from '../support/cluster-lock.js'
import { kubectl } from '../support/host-deployment.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'

const EXAMPLE = 'test/fixtures/upstream-examples/pprof-profiling'

/** `go tool pprof -top 20 URL`, as test.sh runs it; resolves with its exit code and output. */
function pprofTop(url: string): Promise<{ code: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'upstream-pprof-'))
  return new Promise((resolve) => {
    execFile(
      'go',
      ['tool', 'pprof', '-top', '20', url],
      { timeout: 600_000, env: { ...process.env, PPROF_TMPDIR: dir } },
      (error, stdout, stderr) => {
        rmSync(dir, { recursive: true, force: true })
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
        resolve({ code, output: `${stdout}\n${stderr}` })
      }
    )
  })
}

/** The container arguments of the example's StatefulSet patch. */
function patchedArgs(): string[] {
  const patch = parse(readFileSync(join(EXAMPLE, 'manifest/args.yaml'), 'utf8')) as {
    spec: { template: { spec: { containers: { name: string; args: string[] }[] } } }
  }
  const container = patch.spec.template.spec.containers.find((c) => c.name === 'metacontroller')
  return container?.args ?? []
}

describe('upstream example pprof-profiling', () => {
  let plane: ControlPlane
  let release = (): void => undefined
  const engines: SpawnedEngine[] = []

  before(async () => {
    plane = await startControlPlane({})
    release = await lockCluster(plane.kubeconfigPath, 'upstream-examples')
    await kubectl(plane.kubeconfigPath, ['create', 'namespace', 'metacontroller'])
  })

  after(async () => {
    for (const engine of engines) engine.kill()
    await kubectl(plane.kubeconfigPath, ['delete', '-f', `${EXAMPLE}/manifest/service.yaml`])
    release()
    await plane.stop()
  })

  it('serves heap profiles to go tool pprof only with the args.yaml flags', async () => {
    const applied = await kubectl(plane.kubeconfigPath, [
      'apply',
      '-f',
      `${EXAMPLE}/manifest/service.yaml`,
    ])
    assert.ok(applied !== undefined, 'service.yaml applies')
    const args = patchedArgs()
    assert.deepEqual(args, [
      '--zap-devel',
      '--zap-log-level=5',
      '--discovery-interval=5s',
      '--pprof-address=:6060',
    ])
    const service = JSON.parse(
      (await kubectl(plane.kubeconfigPath, [
        'get',
        'service',
        'metacontroller',
        '-n',
        'metacontroller',
        '-o',
        'json',
      ])) ?? '{}'
    ) as { spec?: { ports?: { targetPort?: number }[] } }
    assert.equal(service.spec?.ports?.[0]?.targetPort, 6060, 'the Service targets the pprof port')

    const port = await findFreePort()
    const heap = `http://127.0.0.1:${port}/debug/pprof/heap`
    // Profiling off (the default): the request must fail, as test.sh expects.
    const plain = spawnEngine(plane.kubeconfigPath, [])
    engines.push(plain)
    await plain.line('engine started')
    const off = await pprofTop(heap)
    assert.notEqual(off.code, 0, off.output)
    plain.kill()
    await plain.exited

    const local = args.map((arg) =>
      arg.startsWith('--pprof-address=') ? `--pprof-address=127.0.0.1:${port}` : arg
    )
    const profiled = spawnEngine(plane.kubeconfigPath, local)
    engines.push(profiled)
    await waitFor(
      async () => {
        const response = await request(heap).catch(() => undefined)
        await response?.body.text()
        return response?.statusCode === 200
      },
      { timeoutMs: 60_000, description: 'the pprof server' }
    )
    const on = await pprofTop(heap)
    assert.equal(on.code, 0, on.output)
    assert.match(on.output, /Type: inuse_space/)
    assert.match(on.output, /flat%/)
    // --zap-devel: console lines, not JSON (its debug level: unit test of parseRunFlags).
    assert.equal(profiled.process.exitCode, null, 'the flags were accepted')
    assert.ok(profiled.raw.length > 0 && profiled.lines.length === 0, 'console log lines')
  })
})
