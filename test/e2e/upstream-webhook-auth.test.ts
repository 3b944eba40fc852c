// Upstream's `webhook-auth` example (test/fixtures/upstream-examples/webhook-auth, vendored
// unchanged) against `metactl run`: its test.sh runs as is — it makes the certificates with
// openssl, creates the Secrets and ConfigMap, applies the manifests with `kubectl apply -k`, and
// checks the propagated Secrets, the parent's status and the SyncError of the wrong token.
//
// What stands in for the cluster: the local control plane runs no containers and no Service
// proxy, so (1) the example's hook Deployment is run on the host by test/support/host-deployment.ts
// (its ConfigMap's sync.py, unchanged, with the Deployment's Secret volumes copied locally and a
// loopback port for container port 8443), and (2) the engine reaches the hook URL's in-cluster name
// `webhook-auth-controller.metacontroller:443` through `--hook-address`, as the Service would;
// TLS still verifies that name against the example's CA.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { after, before, describe, it } from 'node:test'
import { request } from 'undici'
import { findFreePort, startControlPlane } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { lockCluster } from '../support/cluster-lock.js'
import { kubectl, runDeploymentOnHost } from '../support/host-deployment.js'
import type { HostDeployment } from '../support/host-deployment.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'

const EXAMPLE = 'test/fixtures/upstream-examples/webhook-auth'

/** Runs the example's own test.sh in its directory; resolves with its exit code and output. */
function testScript(kubeconfig: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['test.sh'],
      {
        cwd: EXAMPLE,
        timeout: 300_000,
        env: { ...process.env, KUBECONFIG: kubeconfig },
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
        resolve({ code, output: `${stdout}\n${stderr}` })
      }
    )
  })
}

describe('upstream example webhook-auth', () => {
  let plane: ControlPlane
  let release = (): void => undefined
  let engine: SpawnedEngine | undefined
  let hook: HostDeployment | undefined

  before(async () => {
    plane = await startControlPlane({})
    release = await lockCluster(plane.kubeconfigPath, 'upstream-examples')
    // test.sh expects Metacontroller installed, that is its namespace present.
    await kubectl(plane.kubeconfigPath, ['create', 'namespace', 'metacontroller'])
  })

  after(async () => {
    engine?.kill()
    hook?.stop()
    release()
    await plane.stop()
  })

  it('passes its test.sh unchanged against metactl run', async () => {
    const port = await findFreePort()
    engine = spawnEngine(plane.kubeconfigPath, [
      '--discovery-interval',
      '1s',
      '--hook-address',
      `webhook-auth-controller.metacontroller:443=127.0.0.1:${port}`,
    ])
    await engine.line('engine started')
    const script = testScript(plane.kubeconfigPath)
    hook = await runDeploymentOnHost(
      plane.kubeconfigPath,
      'metacontroller',
      'webhook-auth-controller',
      port
    )
    const result = await script
    assert.equal(result.code, 0, `${result.output}\nhook:\n${hook.output.join('')}`)
    assert.match(result.output, /All assertions passed\./)
    const hookLog = hook.output.join('')
    assert.match(hookLog, /\/sync secure-secret-propagation\b/, 'the good controller synced')
    assert.match(hookLog, /Unauthorized request to \/customize|Unauthorized request to \/sync/)

    // The calls went over TLS to the in-cluster name (mapped, so no DNS lookup).
    const address = (await engine.line('serving metrics'))['address'] as string
    const text = await (await request(`http://${address}/metrics`)).body.text()
    assert.match(
      text,
      /^metacontroller_sync_tls_duration_histogram_seconds_count\{url="https:\/\/webhook-auth-controller\.metacontroller\/sync",controller_name="webhook-auth-controller",controller_type="CompositeController",event="tls_handshake_done"\} [1-9]/m
    )
    assert.match(
      text,
      /^metacontroller_(sync|customize)_requests_total\{url="https:\/\/webhook-auth-controller\.metacontroller\/\1",controller_name="webhook-auth-controller-invalid",controller_type="CompositeController",code="401",method="post"\} [1-9]/m
    )
  })
})
