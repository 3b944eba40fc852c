import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Registry } from 'prom-client'
import { HookMetrics, isPanic } from './hook-metrics.js'
import { TerminalError } from '../../runtime/queue/reconcile-errors.js'

describe('HookMetrics connect phases', () => {
  it("exposes upstream's DNS and TLS histograms with the event label and their buckets", async () => {
    const registry = new Registry()
    const observer = new HookMetrics(registry).hookObserver({
      hook: 'sync',
      url: 'https://hooks.default/sync',
      controllerName: 'cc',
      controllerType: 'CompositeController',
    })
    observer.onConnectPhase('dns_start', 0.001)
    observer.onConnectPhase('dns_done', 0.02)
    observer.onConnectPhase('tls_handshake_start', 0.03)
    observer.onConnectPhase('tls_handshake_done', 0.2)
    const text = await registry.metrics()
    const labels =
      'url="https://hooks.default/sync",controller_name="cc",controller_type="CompositeController"'
    const dns = 'metacontroller_sync_dns_duration_histogram_seconds'
    const tls = 'metacontroller_sync_tls_duration_histogram_seconds'
    assert.match(text, new RegExp(`^# TYPE ${dns} histogram$`, 'm'))
    assert.match(text, new RegExp(`^# TYPE ${tls} histogram$`, 'm'))
    for (const le of ['0.005', '0.01', '0.025', '0.05', '\\+Inf']) {
      assert.match(
        text,
        new RegExp(`^${dns}_bucket\\{le="${le}",${labels},event="dns_done"\\}`, 'm')
      )
    }
    assert.match(
      text,
      new RegExp(`^${dns}_bucket\\{le="0.01",${labels},event="dns_done"\\} 0$`, 'm')
    )
    assert.match(
      text,
      new RegExp(`^${dns}_bucket\\{le="0.025",${labels},event="dns_done"\\} 1$`, 'm')
    )
    for (const le of ['0.05', '0.1', '0.25', '0.5']) {
      assert.match(
        text,
        new RegExp(`^${tls}_bucket\\{le="${le}",${labels},event="tls_handshake_done"\\}`, 'm')
      )
    }
    assert.match(
      text,
      new RegExp(`^${tls}_count\\{${labels},event="tls_handshake_start"\\} 1$`, 'm')
    )
    assert.doesNotMatch(text, new RegExp(`^${dns}_count\\{[^}]*event="tls`, 'm'))
  })
})

describe('HookMetrics hook-call limiter', () => {
  it('counts the calls waiting for a slot per controller and hook, back to zero when they leave', async () => {
    const registry = new Registry()
    const observer = new HookMetrics(registry).limiterObserver('cc', 'CompositeController')
    observer.onWaiting('customize', 1)
    observer.onWaiting('customize', 1)
    observer.onWaiting('sync', 1)
    const series = (hook: string): RegExp =>
      new RegExp(
        `^metacontroller_hook_calls_waiting\\{controller_name="cc",controller_type="CompositeController",hook="${hook}"\\} (\\d+)$`,
        'm'
      )
    let text = await registry.metrics()
    assert.match(text, /^# TYPE metacontroller_hook_calls_waiting gauge$/m)
    assert.equal(series('customize').exec(text)?.[1], '2')
    assert.equal(series('sync').exec(text)?.[1], '1')
    observer.onWaiting('customize', -1)
    observer.onWaiting('customize', -1)
    text = await registry.metrics()
    assert.equal(series('customize').exec(text)?.[1], '0')
  })
})

describe('HookMetrics reconcile series', () => {
  it('counts workers at work, the worker count, terminal errors and panics per controller', async () => {
    const registry = new Registry()
    const observer = new HookMetrics(registry).reconcileObserver('CompositeController-cc', 5)
    const series = async (): Promise<string[]> =>
      (await registry.metrics())
        .split('\n')
        .filter((l) => /^controller_runtime_(active|max|reconcile_panics|terminal)/.test(l))
    observer.onStart?.('a')
    observer.onStart?.('b')
    assert.deepEqual(await series(), [
      'controller_runtime_active_workers{controller="CompositeController-cc"} 2',
      'controller_runtime_max_concurrent_reconciles{controller="CompositeController-cc"} 5',
    ])
    observer.onOutcome?.('a', { result: 'terminal', error: new TerminalError('bad spec') }, 1)
    observer.onOutcome?.('b', { result: 'error', error: new TypeError('x is undefined') }, 1)
    observer.onStart?.('c')
    observer.onOutcome?.('c', { result: 'error', error: new Error('hook answered 500') }, 1)
    assert.deepEqual(await series(), [
      'controller_runtime_reconcile_panics_total{controller="CompositeController-cc"} 1',
      'controller_runtime_terminal_reconcile_errors_total{controller="CompositeController-cc"} 1',
      'controller_runtime_active_workers{controller="CompositeController-cc"} 0',
      'controller_runtime_max_concurrent_reconciles{controller="CompositeController-cc"} 5',
    ])
  })

  it('calls a fault of the code a panic, not an error raised on purpose', () => {
    assert.equal(isPanic(new TypeError('read properties of undefined')), true)
    assert.equal(isPanic(new RangeError('Maximum call stack size exceeded')), true)
    assert.equal(isPanic('a thrown string'), true)
    assert.equal(isPanic(new AggregateError([new Error('a'), new ReferenceError('b')])), true)
    assert.equal(isPanic(new Error('hook call failed')), false)
    assert.equal(isPanic(new AggregateError([new Error('a')])), false)
  })
})
