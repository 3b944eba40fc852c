// /healthz and /readyz on a real engine: healthy while its caches hear from the API server,
// unhealthy with the reasons once a synced cache has gone silent for the threshold.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { request } from 'undici'
import { Engine } from '../../src/engine/engine.js'
import { startOpsServer } from '../../src/cli/commands/ops-server.js'
import { startControlPlane } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { METACONTROLLER_CRDS } from '../support/engine-fixture.js'

describe('engine health', () => {
  let plane: ControlPlane
  let engine: Engine

  before(async () => {
    plane = await startControlPlane({ crds: METACONTROLLER_CRDS })
    // No hosted controller: the shared cluster holds other tests' controllers.
    engine = new Engine(plane.config, { targetLabelSelector: 'engine-health=none' })
    await engine.start()
  })

  after(async () => {
    await engine.stop()
    await plane.stop()
  })

  it('is healthy and ready once started, and names a cache that went silent', async () => {
    assert.deepEqual(engine.notReady(), [])
    assert.deepEqual(engine.unhealthy(), [])
    await new Promise((resolve) => setTimeout(resolve, 50))
    const silent = engine.unhealthy(1)
    assert.ok(
      silent.some((reason) =>
        /compositecontrollers.*no list or watch event for \d+ s/.test(reason)
      ),
      silent.join('\n')
    )
  })

  it('answers /healthz 500 with the reasons while unhealthy', async () => {
    let reasons: string[] = []
    const server = await startOpsServer(
      { host: '127.0.0.1', port: 0 },
      { notHealthy: () => reasons, notReady: () => engine.notReady() }
    )
    try {
      const get = async (path: string): Promise<[number, string]> => {
        const response = await request(`http://127.0.0.1:${server.port}${path}`)
        return [response.statusCode, await response.body.text()]
      }
      assert.deepEqual(await get('/healthz'), [200, 'ok'])
      reasons = ['pods: no list or watch event for 700 s']
      assert.deepEqual(await get('/healthz'), [500, 'pods: no list or watch event for 700 s'])
      assert.deepEqual(await get('/readyz'), [200, 'ok'])
    } finally {
      await server.close()
    }
  })
})
