/**
 * Upstream Metacontroller's per-hook HTTP metrics (`metacontroller_<hook>_*`) and
 * controller-runtime's reconcile metrics (`controller_runtime_reconcile_*`), with their names,
 * types, labels and buckets.
 *
 * @remarks
 * Upstream registers one collector per (controller, hook, URL) with those three as const labels;
 * a Prometheus registry here holds one collector per name, so they are ordinary labels with the
 * same names and values, which gives the same exposition.
 *
 * @module
 */
import { Counter, Gauge, Histogram } from '../../runtime/metrics/prom-client-core.js'
import type { Registry } from '../../runtime/metrics/prom-client-core.js'
import type { Outcome } from '../../runtime/queue/controller-loop.js'
import type { ControllerLoopObserver } from '../../runtime/queue/controller-loop.js'

/** The hook types upstream has metrics for. */
export type MeteredHook = 'sync' | 'finalize' | 'customize'

/** Which hook of which controller a call is for: upstream's const labels. */
export interface HookMetricLabels {
  readonly hook: MeteredHook
  readonly url: string
  readonly controllerName: string
  /** `CompositeController` or `DecoratorController`. */
  readonly controllerType: string
}

/**
 * A phase of opening a connection to a hook, named as upstream's `event` label (Go's httptrace
 * events): DNS only when a name is resolved, TLS only for https.
 */
export type ConnectPhase = 'dns_start' | 'dns_done' | 'tls_handshake_start' | 'tls_handshake_done'

/** Receives one webhook's HTTP requests. */
export interface HookRequestObserver {
  /** A request starts; call the returned function when it ended, whatever the outcome. */
  begin(): () => void
  /** A response arrived (any status), `seconds` after the request started. */
  onResponse(statusCode: number, seconds: number): void
  /** A new connection reached `phase`, `seconds` after the request that opened it started. */
  onConnectPhase(phase: ConnectPhase, seconds: number): void
}

/** Receives how many calls of one controller wait for a hook-call slot, when it changes. */
export interface HookCallWaitObserver {
  onWaiting(hook: MeteredHook, delta: 1 | -1): void
}

// Prometheus' default buckets, which upstream's request-duration histograms use.
const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
// controller-runtime's reconcile_time_seconds buckets.
// Upstream's buckets of the DNS and TLS phase histograms.
const DNS_BUCKETS = [0.005, 0.01, 0.025, 0.05]
const TLS_BUCKETS = [0.05, 0.1, 0.25, 0.5]
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1,
  1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
]

type ConstLabel = 'url' | 'controller_name' | 'controller_type'

interface HookSeries {
  readonly requests: Counter<ConstLabel | 'code' | 'method'>
  readonly duration: Histogram<ConstLabel | 'method'>
  readonly inFlight: Gauge<ConstLabel>
  readonly dns: Histogram<ConstLabel | 'event'>
  readonly tls: Histogram<ConstLabel | 'event'>
}

/** The `metacontroller_<hook>_*` collectors of one hook type. */
function hookSeries(hook: MeteredHook, registers: Registry[]): HookSeries {
  const constLabels: ConstLabel[] = ['url', 'controller_name', 'controller_type']
  return {
    requests: new Counter({
      name: `metacontroller_${hook}_requests_total`,
      help: `A counter for requests to the ${hook} hook.`,
      labelNames: [...constLabels, 'code', 'method'],
      registers,
    }),
    duration: new Histogram({
      name: `metacontroller_${hook}_request_duration_histogram_seconds`,
      help: `A histogram of request latencies to the ${hook} hook.`,
      labelNames: [...constLabels, 'method'],
      buckets: DEFAULT_BUCKETS,
      registers,
    }),
    inFlight: new Gauge({
      name: `metacontroller_${hook}_in_flight_requests`,
      help: `A gauge of in-flight requests to the ${hook} hook.`,
      labelNames: constLabels,
      registers,
    }),
    dns: new Histogram({
      name: `metacontroller_${hook}_dns_duration_histogram_seconds`,
      help: `Seconds from the start of a request to the ${hook} hook to each DNS phase of its new connection.`,
      labelNames: [...constLabels, 'event'],
      buckets: DNS_BUCKETS,
      registers,
    }),
    tls: new Histogram({
      name: `metacontroller_${hook}_tls_duration_histogram_seconds`,
      help: `Seconds from the start of a request to the ${hook} hook to each TLS handshake phase of its new connection.`,
      labelNames: [...constLabels, 'event'],
      buckets: TLS_BUCKETS,
      registers,
    }),
  }
}

/** Maps a loop outcome to controller-runtime's `result` label. */
export function reconcileResult(outcome: Outcome): 'success' | 'requeue_after' | 'error' {
  switch (outcome.result) {
    case 'success':
      return 'success'
    case 'requeue_after':
    case 'retry_after':
      return 'requeue_after'
    case 'not_synced':
    case 'conflict':
    case 'terminal':
    case 'error':
      return 'error'
  }
}

/**
 * Whether a reconcile error is the JavaScript counterpart of a Go panic: not an error the engine
 * or a hook raised on purpose, but a fault of the code itself (a `TypeError`, `ReferenceError` or
 * `RangeError`, or a thrown value that is no `Error` at all).
 */
export function isPanic(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.some(isPanic)
  return (
    !(error instanceof Error) ||
    error instanceof TypeError ||
    error instanceof ReferenceError ||
    error instanceof RangeError
  )
}

/** Hook and reconcile metrics on one registry. */
export class HookMetrics {
  readonly #series = new Map<MeteredHook, HookSeries>()
  readonly #reconciles: Counter<'controller' | 'result'>
  readonly #reconcileErrors: Counter<'controller'>
  readonly #reconcileTime: Histogram<'controller'>
  readonly #reconcilePanics: Counter<'controller'>
  readonly #terminalErrors: Counter<'controller'>
  readonly #activeWorkers: Gauge<'controller'>
  readonly #maxConcurrent: Gauge<'controller'>
  readonly #waiting: Gauge<'controller_name' | 'controller_type' | 'hook'>

  constructor(registry: Registry) {
    const registers = [registry]
    for (const hook of ['sync', 'finalize', 'customize'] as const) {
      this.#series.set(hook, hookSeries(hook, registers))
    }
    this.#reconciles = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    })
    this.#reconcileErrors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    })
    this.#reconcileTime = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_BUCKETS,
      registers,
    })
    this.#reconcilePanics = new Counter({
      name: 'controller_runtime_reconcile_panics_total',
      help: 'Total number of reconciliation panics per controller',
      labelNames: ['controller'],
      registers,
    })
    this.#terminalErrors = new Counter({
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Total number of terminal reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    })
    this.#activeWorkers = new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    })
    this.#maxConcurrent = new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    })
    // Ours (upstream has no cap): calls held back by --hook-max-in-flight, in-process hooks too.
    this.#waiting = new Gauge({
      name: 'metacontroller_hook_calls_waiting',
      help: 'Hook calls waiting for a free slot of their controller (--hook-max-in-flight).',
      labelNames: ['controller_name', 'controller_type', 'hook'],
      registers,
    })
  }

  /** Returns the observer of one controller's hook-call limiter (calls waiting for a slot). */
  limiterObserver(controllerName: string, controllerType: string): HookCallWaitObserver {
    return {
      onWaiting: (hook, delta) => {
        this.#waiting.inc(
          { controller_name: controllerName, controller_type: controllerType, hook },
          delta
        )
      },
    }
  }

  /** Returns the observer of one webhook's requests. */
  hookObserver(labels: HookMetricLabels): HookRequestObserver {
    const series = this.#series.get(labels.hook)
    if (series === undefined) throw new Error(`no metrics for hook ${labels.hook}`)
    const constant = {
      url: labels.url,
      controller_name: labels.controllerName,
      controller_type: labels.controllerType,
    }
    // promhttp, which upstream uses, reports the method in lower case.
    const method = 'post'
    return {
      begin: () => {
        series.inFlight.inc(constant)
        return () => {
          series.inFlight.dec(constant)
        }
      },
      onResponse: (statusCode, seconds) => {
        series.requests.inc({ ...constant, code: String(statusCode), method })
        series.duration.observe({ ...constant, method }, seconds)
      },
      onConnectPhase: (phase, seconds) => {
        const histogram = phase.startsWith('dns_') ? series.dns : series.tls
        histogram.observe({ ...constant, event: phase }, seconds)
      },
    }
  }

  /**
   * Returns the loop observer that counts and times the reconciles of `controller`, whose loop
   * runs `workers` workers, and counts those at work.
   */
  reconcileObserver(controller: string, workers: number): ControllerLoopObserver {
    const labels = { controller }
    this.#maxConcurrent.set(labels, workers)
    this.#activeWorkers.set(labels, 0)
    return {
      onStart: () => {
        this.#activeWorkers.inc(labels)
      },
      onOutcome: (_key, outcome, durationMs) => {
        this.#activeWorkers.dec(labels)
        const result = reconcileResult(outcome)
        this.#reconciles.inc({ controller, result })
        if (result === 'error') this.#reconcileErrors.inc(labels)
        if (outcome.result === 'terminal') this.#terminalErrors.inc(labels)
        if (outcome.result === 'error' && isPanic(outcome.error)) this.#reconcilePanics.inc(labels)
        this.#reconcileTime.observe(labels, durationMs / 1000)
      },
    }
  }
}

const hookMetricsByRegistry = new WeakMap<Registry, HookMetrics>()

/**
 * The {@link HookMetrics} of `registry`, made on first use: a registry holds one collector per
 * name, so every engine and hosted controller sharing a registry shares its hook metrics.
 */
export function hookMetricsFor(registry: Registry): HookMetrics {
  let metrics = hookMetricsByRegistry.get(registry)
  if (metrics === undefined) {
    metrics = new HookMetrics(registry)
    hookMetricsByRegistry.set(registry, metrics)
  }
  return metrics
}
