// `/healthz` of `metactl run` after its event loop stalled: the process is frozen (SIGSTOP) for
// longer than `--healthz-max-event-loop-delay`, as a long synchronous stretch would hold it, and
// once it runs again its liveness probe fails with the stall as the reason.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { request } from 'undici'
import { startControlPlane } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'

async function get(url: string): Promise<[number, string]> {
  const response = await request(url)
  return [response.statusCode, await response.body.text()]
}

describe('metactl run with a stalled event loop', () => {
  let plane: ControlPlane
  let engine: SpawnedEngine

  before(async () => {
    plane = await startControlPlane()
  })

  after(async () => {
    engine.kill()
    await engine.exited
    await plane.stop()
  })

  it('fails /healthz with the stall after the loop was blocked past the threshold', async () => {
    // No hosted controller: the shared cluster holds other tests' controllers.
    engine = spawnEngine(plane.kubeconfigPath, [
      '--healthz-max-event-loop-delay=2s',
      '--target-label-selector=event-loop-stall=none',
    ])
    const probes = (await engine.line('serving health probes'))['address'] as string
    await engine.line('serving controllers')
    assert.deepEqual(await get(`http://${probes}/healthz`), [200, 'ok'])
    const pid = engine.process.pid ?? 0
    process.kill(pid, 'SIGSTOP')
    await new Promise((resolve) => setTimeout(resolve, 3500))
    process.kill(pid, 'SIGCONT')
    const [status, body] = await get(`http://${probes}/healthz`)
    assert.equal(status, 500, body)
    assert.match(body, /event loop blocked for \d+\.\d s .*\(2\.0 s threshold\)/)
  })
})
