// Proves `metactl run` as a user runs it: a separate process that serves a CompositeController
// from the cluster with a webhook, exposes /metrics, /healthz and /readyz, logs JSON lines keyed by
// controller, serves pprof profiles that `go tool pprof` reads, and drains and exits 0 on SIGTERM.
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { after, before, describe, it } from 'node:test'
import { request } from 'undici'
import type { KubeObject } from '../../src/core/kube-object.js'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import {
  CCS,
  METACONTROLLER_CRDS,
  NAMESPACES,
  serveHook,
  testCrd,
} from '../support/engine-fixture.js'
import type { ServedHook } from '../support/engine-fixture.js'

/** Runs `go tool pprof -top URL` and returns its output; rejects when it fails. */
function pprofTop(url: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'metactl-pprof-'))
  return new Promise<string>((resolve, reject) => {
    execFile(
      'go',
      ['tool', 'pprof', '-top', url],
      // The first use of the pprof tool may build it; later runs use Go's cache.
      { timeout: 600_000, env: { ...process.env, PPROF_TMPDIR: dir } },
      (error, stdout, stderr) => {
        rmSync(dir, { recursive: true, force: true })
        if (error !== null) reject(new Error(`go tool pprof ${url} failed: ${stderr}`))
        else resolve(`${stdout}\n${stderr}`)
      }
    )
  })
}

const parentCrd = testCrd('RunParent')
const childCrd = testCrd('RunChild')

describe('metactl run', () => {
  let plane: ControlPlane
  let hook: ServedHook
  const ns = `run-${Date.now().toString(36)}`

  before(async () => {
    plane = await startControlPlane({ crds: [...METACONTROLLER_CRDS, parentCrd.crd, childCrd.crd] })
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    })
    hook = await serveHook((body) => {
      const { parent } = body as { parent: KubeObject }
      const name = parent.metadata.name ?? ''
      return {
        status: { served: 'metactl run' },
        children: [
          {
            apiVersion: childCrd.apiVersion,
            kind: 'RunChild',
            metadata: { name, labels: { app: name } },
          },
        ],
      }
    })
  })

  after(async () => {
    await plane.client.delete(CCS, `run-${ns}`).catch(() => undefined)
    await plane.client.delete(NAMESPACES, ns).catch(() => undefined)
    await hook.close()
    await plane.stop()
  })

  it('serves a CompositeController, exposes metrics and probes, and stops cleanly on SIGTERM', async () => {
    const proc = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli/main.ts',
        'run',
        '--kubeconfig',
        plane.kubeconfigPath,
        '--discovery-interval',
        '1s',
        '--metrics-address',
        '127.0.0.1:0',
        '--health-probe-bind-address',
        '127.0.0.1:0',
        '--pprof-address',
        '127.0.0.1:0',
        '--events-qps',
        '1/300',
        '--events-burst',
        '25',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] }
    )
    const lines: Record<string, unknown>[] = []
    const notJson: string[] = []
    const exited = new Promise<number | null>((resolve) =>
      proc.once('exit', (code) => {
        resolve(code)
      })
    )
    const reader = createInterface({ input: proc.stderr })
    reader.on('line', (line) => {
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>)
      } catch {
        notJson.push(line)
      }
    })
    try {
      const address = (msg: string): Promise<string> =>
        waitFor(() => lines.find((l) => l['msg'] === msg)?.['address'] as string | undefined, {
          timeoutMs: 30_000,
          description: `the "${msg}" log line`,
        })
      const metrics = await address('serving metrics')
      const probes = await address('serving health probes')
      const profiles = await address('serving profiles')
      await waitFor(() => lines.some((l) => l['msg'] === 'engine started'), { timeoutMs: 30_000 })

      await plane.client.create(CCS, {
        apiVersion: 'metacontroller.k8s.io/v1alpha1',
        kind: 'CompositeController',
        metadata: { name: `run-${ns}` },
        spec: {
          parentResource: { apiVersion: parentCrd.apiVersion, resource: 'runparents' },
          childResources: [{ apiVersion: childCrd.apiVersion, resource: 'runchilds' }],
          hooks: { sync: { webhook: { url: hook.url } } },
        },
      })
      await plane.client.create(parentCrd.ref, {
        apiVersion: parentCrd.apiVersion,
        kind: 'RunParent',
        metadata: { name: 'web', namespace: ns },
        spec: { selector: { matchLabels: { app: 'web' } } },
      })
      await waitFor(
        () => plane.client.get(childCrd.ref, 'web', { namespace: ns }).catch(() => undefined),
        {
          timeoutMs: 30_000,
          description: 'the child created by metactl run',
        }
      )
      await waitFor(async () => {
        const parent = await plane.client.get(parentCrd.ref, 'web', { namespace: ns })
        return (parent['status'] as { served?: string } | undefined)?.served === 'metactl run'
      })
      assert.ok(
        lines.some((l) => l['controller'] === `run-${ns}` && l['msg'] === 'started controller')
      )

      const health = await request(`http://${probes}/healthz`)
      assert.equal(health.statusCode, 200)
      await health.body.text()
      const ready = await request(`http://${probes}/readyz`)
      assert.equal(ready.statusCode, 200, await ready.body.text())
      const scrape = await request(`http://${metrics}/metrics`)
      const text = await scrape.body.text()
      assert.match(text, /^rest_client_requests_total\{/m)
      assert.match(
        text,
        new RegExp(`^workqueue_adds_total\\{name="CompositeController-run-${ns}"\\} \\d+`, 'm')
      )
      assert.match(
        text,
        new RegExp(
          `^metacontroller_sync_requests_total\\{url="${hook.url}",controller_name="run-${ns}",` +
            `controller_type="CompositeController",code="200",method="post"\\} [1-9]`,
          'm'
        )
      )

      const heap = await pprofTop(`http://${profiles}/debug/pprof/heap`)
      assert.match(heap, /Type: inuse_space/)
      assert.match(heap, /flat%/)
      // Give the CPU profile work to sample: more parents while it runs.
      const cpu = pprofTop(`http://${profiles}/debug/pprof/profile?seconds=3`)
      for (let i = 0; i < 20; i++) {
        await plane.client.create(parentCrd.ref, {
          apiVersion: parentCrd.apiVersion,
          kind: 'RunParent',
          metadata: { name: `load-${i}`, namespace: ns },
          spec: { selector: { matchLabels: { app: `load-${i}` } } },
        })
      }
      const cpuText = await cpu
      assert.match(cpuText, /Type: wall/)
      assert.match(cpuText, /Duration: [\d.]+s, Total samples = [\d.]+\w*s? /)

      assert.ok(lines.some((l) => l['msg'] === 'serving controllers'))
      proc.kill('SIGTERM')
      assert.equal(await exited, 0)
      assert.ok(lines.some((l) => l['msg'] === 'stopped'))
      assert.deepEqual(notJson, [], 'stderr holds JSON lines only')
    } finally {
      if (proc.exitCode === null) proc.kill('SIGKILL')
    }
  })

  it('fails at startup on an unknown --apply-strategy with one clear line, no stack trace', async () => {
    const proc = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli/main.ts',
        'run',
        '--kubeconfig',
        plane.kubeconfigPath,
        '--apply-strategy=serverside',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] }
    )
    let stderr = ''
    proc.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve))
    assert.equal(code, 2, 'a bad flag is a usage error')
    assert.equal(
      stderr.trim(),
      'metactl: --apply-strategy: unknown apply strategy "serverside": use dynamic-apply or ' +
        'server-side-apply (empty means dynamic-apply)'
    )
  })
})
