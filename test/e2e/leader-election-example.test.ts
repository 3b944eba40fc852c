// Upstream's `examples/leader-election` run against `metactl run`: two replicas with exactly the
// example's args (development logging, 5 s discovery, leader election with client-go's default
// durations), and the example's checks on their logs: both replicas attempt to acquire the lease,
// exactly one succeeds. Then the leader is killed and the other replica must acquire the lease.
// The Lease name and namespace are this test's own, so no other engine on the cluster competes.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startControlPlane, waitFor } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { NAMESPACES } from '../support/engine-fixture.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'

/** The args of upstream's `examples/leader-election/manifest/args.yaml`, unchanged. */
const EXAMPLE_ARGS = [
  '--zap-devel',
  '--zap-log-level=5',
  '--discovery-interval=5s',
  '--leader-election',
]
/** The strings the example's test.sh greps for. */
const SUCCESS_MSG = 'Successfully acquired lease'
const ATTEMPT_MSG = 'Attempting to acquire leader lease'

/** `kubectl logs <pod> | grep <text> | wc -l`: the log lines of `engine` that contain `text`. */
function grepCount(engine: SpawnedEngine, text: string): number {
  const all = [...engine.raw, ...engine.lines.map((l) => JSON.stringify(l))]
  return all.filter((line) => line.includes(text)).length
}

describe("upstream's leader-election example", () => {
  let plane: ControlPlane
  const ns = `le-example-${Date.now().toString(36)}`
  const engines: SpawnedEngine[] = []

  before(async () => {
    plane = await startControlPlane()
    await plane.client.create(NAMESPACES, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    })
  })

  after(async () => {
    for (const engine of engines) engine.kill()
    await Promise.all(engines.map((e) => e.exited))
    await plane.client.delete(NAMESPACES, ns).catch(() => undefined)
    await plane.stop()
  })

  it('two replicas with its args: both attempt, exactly one acquires; the other takes over a killed leader', async () => {
    // Outside a cluster there is no Pod namespace to default to (upstream needs the flag there too).
    const placement = ['--leader-election-namespace', ns, '--leader-election-id', `${ns}-lease`]
    for (let i = 0; i < 2; i++)
      engines.push(spawnEngine(plane.kubeconfigPath, [...EXAMPLE_ARGS, ...placement]))
    const [first, second] = engines as [SpawnedEngine, SpawnedEngine]
    await waitFor(
      () => grepCount(first, SUCCESS_MSG) === 1 || grepCount(second, SUCCESS_MSG) === 1,
      {
        timeoutMs: 180_000,
        intervalMs: 100,
        description: `one replica logging "${SUCCESS_MSG}"`,
      }
    )
    const [leader, standby] =
      grepCount(first, SUCCESS_MSG) === 1 ? [first, second] : [second, first]
    // The standby has seen the lease taken (it read the holder) before its attempt count is checked.
    await waitFor(() => standby.raw.some((line) => line.includes('new leader elected')), {
      timeoutMs: 30_000,
      description: 'the standby to see the leader',
    })
    assert.equal(leader.raw.length > 0 && leader.lines.length === 0, true, '--zap-devel logs text')
    for (const engine of engines) assert.ok(grepCount(engine, ATTEMPT_MSG) >= 1, ATTEMPT_MSG)
    assert.equal(grepCount(first, SUCCESS_MSG) + grepCount(second, SUCCESS_MSG), 1, 'one leader')

    leader.kill()
    await leader.exited
    // Client-go's defaults: the standby may take an unrenewed lease 15 s after the last renewal.
    await waitFor(() => grepCount(standby, SUCCESS_MSG) === 1, {
      timeoutMs: 60_000,
      intervalMs: 100,
      description: 'the standby to acquire the lease of the killed leader',
    })
    assert.equal(grepCount(leader, SUCCESS_MSG), 1)
  })
})
