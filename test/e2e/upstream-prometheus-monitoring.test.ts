// Upstream's `prometheus-monitoring` example (test/fixtures/upstream-examples/prometheus-monitoring,
// vendored unchanged) against `metactl run`, as far as it runs without the Prometheus Operator.
// test.sh installs the operator and a Prometheus, applies the Service, ServiceMonitor and
// StatefulSet port patch, and waits until Prometheus reports the `metacontroller` target `up`,
// that is: a GET of /metrics on the Service's `metrics` port answers 200 with an exposition
// Prometheus parses.
//
// Here: service.yaml applies unchanged; the ServiceMonitor's selector, port name and path, and the
// port patch's container port, are checked against that Service and our default
// `--metrics-address`; and the engine's /metrics is scraped as Prometheus does (its Accept header)
// and parsed line by line. Not run: the Prometheus Operator, Prometheus itself, the ServiceMonitor
// (its CRD is not installed) and the in-cluster scrape through the Service (no containers, no
// Service proxy); the engine listens on a free loopback port instead of the container's 9999.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { request } from 'undici'
import { parse } from 'yaml'
import { startControlPlane } from '../../src/testing/index.js'
import type { ControlPlane } from '../../src/testing/index.js'
import { lockCluster } from '../support/cluster-lock.js'
import { kubectl } from '../support/host-deployment.js'
import { metactl } from '../support/run-metactl.js'
import { spawnEngine } from '../support/spawned-engine.js'
import type { SpawnedEngine } from '../support/spawned-engine.js'

const EXAMPLE = 'test/fixtures/upstream-examples/prometheus-monitoring'
// Prometheus 2.x's scrape Accept header.
const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,' +
  'text/plain;version=0.0.4;q=0.5,*/*;q=0.1'
const SAMPLE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? \S+$/

function manifest(file: string): unknown {
  return parse(readFileSync(join(EXAMPLE, 'manifest', file), 'utf8'))
}

interface ServiceMonitor {
  spec: {
    endpoints: { path: string; port: string }[]
    namespaceSelector: { matchNames: string[] }
    selector: { matchLabels: Record<string, string> }
  }
}

interface Service {
  metadata: { namespace: string; labels: Record<string, string> }
  spec: { ports: { name: string; port: number; targetPort: number }[] }
}

describe('upstream example prometheus-monitoring', () => {
  let plane: ControlPlane
  let release = (): void => undefined
  let engine: SpawnedEngine | undefined

  before(async () => {
    plane = await startControlPlane({})
    release = await lockCluster(plane.kubeconfigPath, 'upstream-examples')
    await kubectl(plane.kubeconfigPath, ['create', 'namespace', 'metacontroller'])
  })

  after(async () => {
    engine?.kill()
    await kubectl(plane.kubeconfigPath, ['delete', '-f', `${EXAMPLE}/manifest/service.yaml`])
    release()
    await plane.stop()
  })

  it('exposes a /metrics target that the ServiceMonitor selects and Prometheus can scrape', async () => {
    assert.ok(
      (await kubectl(plane.kubeconfigPath, ['apply', '-f', `${EXAMPLE}/manifest/service.yaml`])) !==
        undefined,
      'service.yaml applies'
    )
    const live = JSON.parse(
      (await kubectl(plane.kubeconfigPath, [
        'get',
        'service',
        'metacontroller',
        '-n',
        'metacontroller',
        '-o',
        'json',
      ])) ?? '{}'
    ) as Service
    const monitor = (manifest('serviceMonitor.yaml') as ServiceMonitor).spec
    assert.ok(monitor.namespaceSelector.matchNames.includes(live.metadata.namespace))
    for (const [key, value] of Object.entries(monitor.selector.matchLabels)) {
      assert.equal(
        live.metadata.labels[key],
        value,
        `the ServiceMonitor selects the Service (${key})`
      )
    }
    const endpoint = monitor.endpoints[0]
    assert.equal(endpoint?.path, '/metrics')
    const port = live.spec.ports.find((p) => p.name === endpoint.port)
    assert.ok(port !== undefined, `the Service has the port named ${endpoint.port}`)
    const patch = manifest('ports.yaml') as {
      spec: { template: { spec: { containers: { ports: { containerPort: number }[] }[] } } }
    }
    const containerPort = patch.spec.template.spec.containers[0]?.ports[0]?.containerPort
    assert.equal(port.targetPort, containerPort)
    // The container port is where metactl run serves metrics by default (upstream's :9999).
    const help = await metactl(['run', '--help'])
    assert.match(help.stdout, new RegExp(`--metrics-address[\\s\\S]*?:${containerPort}"`))

    engine = spawnEngine(plane.kubeconfigPath, ['--discovery-interval', '1s'])
    await engine.line('engine started')
    const address = (await engine.line('serving metrics'))['address'] as string
    const scrape = await request(`http://${address}${endpoint.path}`, {
      headers: { accept: PROMETHEUS_ACCEPT },
    })
    const text = await scrape.body.text()
    assert.equal(scrape.statusCode, 200)
    assert.match(String(scrape.headers['content-type']), /^text\/plain; version=0\.0\.4/)
    const bad = text.split('\n').filter((l) => l !== '' && !l.startsWith('#') && !SAMPLE.test(l))
    assert.deepEqual(bad, [], 'every sample line parses')
    for (const series of [
      'controller_runtime_reconcile_total',
      'workqueue_adds_total',
      'rest_client_requests_total',
      'process_cpu_seconds_total',
    ]) {
      assert.match(text, new RegExp(`^# TYPE ${series} counter$`, 'm'))
    }
    for (const series of ['process_resident_memory_bytes', 'process_start_time_seconds']) {
      assert.match(text, new RegExp(`^# TYPE ${series} gauge$`, 'm'))
    }
  })
})
