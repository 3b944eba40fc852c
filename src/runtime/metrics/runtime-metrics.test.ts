import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Registry } from 'prom-client'
import type { MetricValue } from 'prom-client'
import type { InformerRestartReason } from '../informers/informer.js'
import { RuntimeMetrics } from './runtime-metrics.js'

type Labels = Record<string, string | number>

/** Returns the value of one series of a counter or gauge, or undefined when it does not exist. */
async function valueOf(
  metrics: RuntimeMetrics,
  name: string,
  labels: Labels
): Promise<number | undefined> {
  const metric = metrics.registry.getSingleMetric(name)
  assert.ok(metric, `metric ${name} is registered`)
  const { values } = await metric.get()
  const match = values.find(
    (value) =>
      Object.keys(labels).length === Object.keys(value.labels).length &&
      Object.entries(labels).every(([key, label]) => value.labels[key] === label)
  )
  return match?.value
}

/** Returns the `_count` or `_sum` sample of one histogram series. */
async function histogramSample(
  metrics: RuntimeMetrics,
  name: string,
  suffix: 'count' | 'sum',
  labels: Labels
): Promise<number | undefined> {
  const metric = metrics.registry.getSingleMetric(name)
  assert.ok(metric, `metric ${name} is registered`)
  const { values } = await metric.get()
  const samples = values as readonly (MetricValue<string> & { metricName?: string })[]
  return samples.find(
    (value) =>
      value.metricName === `${name}_${suffix}` &&
      Object.entries(labels).every(([key, label]) => value.labels[key] === label)
  )?.value
}

function countOf(metrics: RuntimeMetrics, name: string, labels: Labels) {
  return histogramSample(metrics, name, 'count', labels)
}

function sumOf(metrics: RuntimeMetrics, name: string, labels: Labels) {
  return histogramSample(metrics, name, 'sum', labels)
}

/** Returns the value of the rest_client_requests_total series of one code, method and host. */
function requestsTotal(metrics: RuntimeMetrics, code: string, method: string, host: string) {
  return valueOf(metrics, 'rest_client_requests_total', { code, method, host })
}

function request(method: string, statusCode: number | undefined, durationMs = 10, throttledMs = 0) {
  return { method, path: '/api/v1/pods', statusCode, durationMs, throttledMs }
}

describe('RuntimeMetrics', () => {
  it('counts API requests in rest_client_requests_total by code, method and host', async () => {
    const metrics = new RuntimeMetrics()
    const observer = metrics.requestObserver('10.0.0.1:6443')
    observer.onRequest(request('GET', 200))
    observer.onRequest(request('GET', 200))
    observer.onRequest(request('PUT', 409))
    const other = metrics.requestObserver('other:443')
    other.onRequest(request('GET', 200))
    assert.equal(await requestsTotal(metrics, '200', 'GET', '10.0.0.1:6443'), 2)
    assert.equal(await requestsTotal(metrics, '409', 'PUT', '10.0.0.1:6443'), 1)
    assert.equal(await requestsTotal(metrics, '200', 'GET', 'other:443'), 1)
  })

  it('counts a request without a status code under code <error>', async () => {
    const metrics = new RuntimeMetrics()
    metrics.requestObserver('h').onRequest(request('POST', undefined))
    assert.equal(await requestsTotal(metrics, '<error>', 'POST', 'h'), 1)
  })

  it('observes request and rate-limiter latency in seconds by verb and host', async () => {
    const metrics = new RuntimeMetrics()
    metrics.requestObserver('h').onRequest(request('GET', 200, 250, 40))
    const labels = { verb: 'GET', host: 'h' }
    assert.equal(await countOf(metrics, 'rest_client_request_duration_seconds', labels), 1)
    assert.equal(await sumOf(metrics, 'rest_client_request_duration_seconds', labels), 0.25)
    assert.equal(await countOf(metrics, 'rest_client_rate_limiter_duration_seconds', labels), 1)
    assert.equal(await sumOf(metrics, 'rest_client_rate_limiter_duration_seconds', labels), 0.04)
  })

  it('records the workqueue_* series under the queue name', async () => {
    const metrics = new RuntimeMetrics()
    const queue = metrics.workQueue('compositecontroller-web')
    const other = metrics.workQueue('other')
    const name = { name: 'compositecontroller-web' }
    queue.onAdd('a')
    queue.onAdd('b')
    queue.onRetry('a')
    queue.onGet('a', 1500)
    queue.onDone('a', 20)
    queue.depth(7)
    other.onAdd('x')
    other.depth(1)
    assert.equal(await valueOf(metrics, 'workqueue_adds_total', name), 2)
    assert.equal(await valueOf(metrics, 'workqueue_adds_total', { name: 'other' }), 1)
    assert.equal(await valueOf(metrics, 'workqueue_retries_total', name), 1)
    assert.equal(await valueOf(metrics, 'workqueue_depth', name), 7)
    assert.equal(await valueOf(metrics, 'workqueue_depth', { name: 'other' }), 1)
    assert.equal(await countOf(metrics, 'workqueue_queue_duration_seconds', name), 1)
    assert.equal(await sumOf(metrics, 'workqueue_queue_duration_seconds', name), 1.5)
    assert.equal(await countOf(metrics, 'workqueue_work_duration_seconds', name), 1)
    assert.equal(await sumOf(metrics, 'workqueue_work_duration_seconds', name), 0.02)
    queue.depth(0)
    assert.equal(await valueOf(metrics, 'workqueue_depth', name), 0, 'depth is a gauge')
  })

  it('counts informer relists and watch restarts by resource and reason', async () => {
    const metrics = new RuntimeMetrics()
    const observer = metrics.informerObserver()
    observer.onRelist?.('pods.v1', 'initial')
    observer.onRelist?.('pods.v1', 'gone')
    observer.onRelist?.('pods.v1', 'gone')
    observer.onWatchRestart?.('pods.v1', 'idle')
    observer.onWatchRestart?.('webs.v1.example.com', 'error')
    observer.onError?.('pods.v1', new Error('x'), 800)
    assert.equal(
      await valueOf(metrics, 'informer_relists_total', { resource: 'pods.v1', reason: 'initial' }),
      1
    )
    assert.equal(
      await valueOf(metrics, 'informer_relists_total', { resource: 'pods.v1', reason: 'gone' }),
      2
    )
    assert.equal(
      await valueOf(metrics, 'informer_watch_restarts_total', {
        resource: 'pods.v1',
        reason: 'idle',
      }),
      1
    )
    assert.equal(
      await valueOf(metrics, 'informer_watch_restarts_total', {
        resource: 'webs.v1.example.com',
        reason: 'error',
      }),
      1
    )
    assert.equal(await valueOf(metrics, 'informer_errors_total', { resource: 'pods.v1' }), 1)
  })

  it('passes informer events on to the next observer', () => {
    const metrics = new RuntimeMetrics()
    const seen: string[] = []
    const observer = metrics.informerObserver({
      onRelist: (resource: string, reason: InformerRestartReason) =>
        seen.push(`relist ${resource} ${reason}`),
      onWatchRestart: (resource: string, reason: InformerRestartReason) =>
        seen.push(`restart ${resource} ${reason}`),
      onError: (resource, _error, retryInMs) => seen.push(`error ${resource} ${retryInMs}`),
      onHandlerError: (resource) => seen.push(`handler ${resource}`),
    })
    observer.onRelist?.('pods.v1', 'initial')
    observer.onWatchRestart?.('pods.v1', 'closed')
    observer.onError?.('pods.v1', new Error('x'), 800)
    observer.onHandlerError?.('pods.v1', new Error('y'))
    assert.deepEqual(seen, [
      'relist pods.v1 initial',
      'restart pods.v1 closed',
      'error pods.v1 800',
      'handler pods.v1',
    ])
  })

  it('sums all requests and the non-GET writes in requestTotals()', async () => {
    const metrics = new RuntimeMetrics()
    assert.deepEqual(await metrics.requestTotals(), { total: 0, writes: 0 })
    const observer = metrics.requestObserver('h')
    observer.onRequest(request('GET', 200))
    observer.onRequest(request('GET', 404))
    observer.onRequest(request('POST', 201))
    observer.onRequest(request('PATCH', 200))
    observer.onRequest(request('DELETE', undefined))
    metrics.requestObserver('h2').onRequest(request('PUT', 200))
    assert.deepEqual(await metrics.requestTotals(), { total: 6, writes: 4 })
  })

  it('renders every metric name in the Prometheus text format', async () => {
    const metrics = new RuntimeMetrics()
    metrics.requestObserver('h').onRequest(request('GET', 200))
    metrics.workQueue('q').onAdd('a')
    metrics.informerObserver().onRelist?.('pods.v1', 'initial')
    const text = await metrics.render()
    for (const name of [
      'rest_client_requests_total',
      'rest_client_request_duration_seconds',
      'rest_client_rate_limiter_duration_seconds',
      'workqueue_depth',
      'workqueue_adds_total',
      'workqueue_queue_duration_seconds',
      'workqueue_work_duration_seconds',
      'workqueue_retries_total',
      'informer_relists_total',
      'informer_watch_restarts_total',
      'informer_errors_total',
    ]) {
      assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), `renders ${name}`)
    }
    assert.match(text, /^rest_client_requests_total\{code="200",method="GET",host="h"\} 1$/m)
    assert.match(text, /^workqueue_adds_total\{name="q"\} 1$/m)
  })

  it('uses the registry it is given, and separate instances do not share series', async () => {
    const registry = new Registry()
    const metrics = new RuntimeMetrics(registry)
    assert.equal(metrics.registry, registry)
    metrics.workQueue('q').onAdd('a')
    const other = new RuntimeMetrics()
    assert.equal(await valueOf(other, 'workqueue_adds_total', { name: 'q' }), undefined)
    assert.equal(await valueOf(metrics, 'workqueue_adds_total', { name: 'q' }), 1)
  })
})

describe('RuntimeMetrics work in progress', () => {
  it("exposes client-go's unfinished-work and longest-running gauges, computed at each scrape", async () => {
    let nowMs = 1_000_000
    const metrics = new RuntimeMetrics(new Registry(), () => nowMs)
    const queue = metrics.workQueue('CompositeController-cc')
    const labels = { name: 'CompositeController-cc' }
    queue.onGet('a', 0)
    nowMs += 2_000
    queue.onGet('b', 0)
    nowMs += 3_000
    assert.equal(await valueOf(metrics, 'workqueue_unfinished_work_seconds', labels), 8)
    assert.equal(await valueOf(metrics, 'workqueue_longest_running_processor_seconds', labels), 5)
    queue.onDone('a', 5_000)
    nowMs += 1_000
    assert.equal(await valueOf(metrics, 'workqueue_unfinished_work_seconds', labels), 4)
    assert.equal(await valueOf(metrics, 'workqueue_longest_running_processor_seconds', labels), 4)
    queue.onDone('b', 4_000)
    assert.equal(await valueOf(metrics, 'workqueue_unfinished_work_seconds', labels), 0)
    assert.equal(await valueOf(metrics, 'workqueue_longest_running_processor_seconds', labels), 0)
  })
})
