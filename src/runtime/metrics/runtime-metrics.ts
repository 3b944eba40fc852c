/**
 * Prometheus metrics of the client and controller runtime, named as client-go and
 * controller-runtime name theirs, so existing dashboards and alerts keep working.
 *
 * @remarks
 * The runtime's parts only know small observer interfaces ({@link RequestObserver},
 * {@link WorkQueueMetrics}, {@link InformerObserver}); this module implements them on a
 * prom-client registry. Nothing here is global: every engine gets its own registry.
 *
 * @module
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from './prom-client-core.js'
import type { RequestObserver } from '../../kube/kube-transport.js'
import type { InformerObserver, InformerRestartReason } from '../informers/informer.js'
import type { WorkQueueMetrics } from '../queue/work-queue-metrics.js'
import type { QueueStallMetrics } from '../queue/queue-stall-watch.js'

// client-go's rest_client latency buckets, in seconds.
const REQUEST_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60]
// client-go's workqueue buckets: 10^-8 s to 10 s, one per decade.
const QUEUE_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10]

/** The client collectors of a {@link RuntimeMetrics}, on `registers`. */
function clientCollectors(registers: Registry[]) {
  return {
    requests: new Counter({
      name: 'rest_client_requests_total',
      help: 'Number of HTTP requests to the API server, partitioned by status code, method, and host.',
      labelNames: ['code', 'method', 'host'],
      registers,
    }),
    requestLatency: new Histogram({
      name: 'rest_client_request_duration_seconds',
      help: 'Request latency in seconds, by verb and host.',
      labelNames: ['verb', 'host'],
      buckets: REQUEST_BUCKETS,
      registers,
    }),
    rateLimiterLatency: new Histogram({
      name: 'rest_client_rate_limiter_duration_seconds',
      help: 'Client-side rate limiter latency in seconds, by verb and host.',
      labelNames: ['verb', 'host'],
      buckets: REQUEST_BUCKETS,
      registers,
    }),
  }
}

/** The queue collectors of a {@link RuntimeMetrics}, on `registers`. */
function queueCollectors(registers: Registry[]) {
  return {
    queueDepth: new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue.',
      labelNames: ['name'],
      registers,
    }),
    queueAdds: new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue.',
      labelNames: ['name'],
      registers,
    }),
    queueLatency: new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested.',
      labelNames: ['name'],
      buckets: QUEUE_BUCKETS,
      registers,
    }),
    queueWork: new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes.',
      labelNames: ['name'],
      buckets: QUEUE_BUCKETS,
      registers,
    }),
    queueRetries: new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue.',
      labelNames: ['name'],
      registers,
    }),
    queueOldestWait: new Gauge({
      name: 'workqueue_oldest_wait_seconds',
      help: 'How long in seconds the oldest key of workqueue has waited for a worker, at the last check.',
      labelNames: ['name'],
      registers,
    }),
    queueStalls: new Counter({
      name: 'workqueue_stalls_total',
      help: 'Number of times the oldest key of workqueue waited longer than the stall threshold.',
      labelNames: ['name'],
      registers,
    }),
  }
}

/** The informer collectors of a {@link RuntimeMetrics}, on `registers`. */
function informerCollectors(registers: Registry[]) {
  return {
    relists: new Counter({
      name: 'informer_relists_total',
      help: 'Number of full lists an informer made, by resource and reason (initial, gone).',
      labelNames: ['resource', 'reason'],
      registers,
    }),
    watchRestarts: new Counter({
      name: 'informer_watch_restarts_total',
      help: 'Number of watches reopened after a failure or an idle timeout, by resource and reason.',
      labelNames: ['resource', 'reason'],
      registers,
    }),
    informerErrors: new Counter({
      name: 'informer_errors_total',
      help: 'Number of list or watch failures an informer retried, by resource.',
      labelNames: ['resource'],
      registers,
    }),
  }
}

/** The leader collectors of a {@link RuntimeMetrics}, on `registers`. */
function leaderCollectors(registers: Registry[]) {
  return {
    // The name client-go's leader-election metrics provider uses, so existing dashboards work.
    leaderStatus: new Gauge({
      name: 'leader_election_master_status',
      help: '1 while this replica leads the named lease, 0 otherwise.',
      labelNames: ['name'],
      registers,
    }),
    leaderChanges: new Counter({
      name: 'leader_election_changes_total',
      help: 'Leadership changes of this replica, by lease and change (started, stopped).',
      labelNames: ['name', 'change'],
      registers,
    }),
  }
}

/** The runtime's metrics on one registry, with the adapters each part needs. */
export class RuntimeMetrics {
  /** The registry to expose on `/metrics`. */
  readonly registry: Registry
  readonly #requests: Counter<'code' | 'method' | 'host'>
  readonly #requestLatency: Histogram<'verb' | 'host'>
  readonly #rateLimiterLatency: Histogram<'verb' | 'host'>
  readonly #queueDepth: Gauge<'name'>
  readonly #queueAdds: Counter<'name'>
  readonly #queueLatency: Histogram<'name'>
  readonly #queueWork: Histogram<'name'>
  readonly #queueRetries: Counter<'name'>
  readonly #queueOldestWait: Gauge<'name'>
  readonly #queueStalls: Counter<'name'>
  /** Per queue name: when each key being processed was handed to its worker (ms). */
  readonly #processing = new Map<string, Map<string, number>>()
  readonly #nowMs: () => number
  readonly #relists: Counter<'resource' | 'reason'>
  readonly #watchRestarts: Counter<'resource' | 'reason'>
  readonly #informerErrors: Counter<'resource'>
  readonly #leaderStatus: Gauge<'name'>
  readonly #leaderChanges: Counter<'name' | 'change'>

  /**
   * Adds the process series (`process_cpu_seconds_total`, `process_resident_memory_bytes`,
   * `process_start_time_seconds`, `process_open_fds`, …, named as Go's process collector that
   * upstream exposes) and Node.js' own (`nodejs_*`, in place of Go's `go_*`).
   *
   * @remarks
   * Once per process, by the command that owns it: the series describe the process, not one
   * engine, and tests run many engines in one process.
   */
  collectProcessMetrics(): void {
    collectDefaultMetrics({ register: this.registry })
  }

  /** @param nowMs - The clock of the in-progress gauges (tests inject one). */
  constructor(registry: Registry = new Registry(), nowMs: () => number = Date.now) {
    this.registry = registry
    this.#nowMs = nowMs
    const registers = [registry]
    const client = clientCollectors(registers)
    this.#requests = client.requests
    this.#requestLatency = client.requestLatency
    this.#rateLimiterLatency = client.rateLimiterLatency
    const queue = queueCollectors(registers)
    this.#queueDepth = queue.queueDepth
    this.#queueAdds = queue.queueAdds
    this.#queueLatency = queue.queueLatency
    this.#queueWork = queue.queueWork
    this.#queueRetries = queue.queueRetries
    this.#queueOldestWait = queue.queueOldestWait
    this.#queueStalls = queue.queueStalls
    const informer = informerCollectors(registers)
    this.#relists = informer.relists
    this.#watchRestarts = informer.watchRestarts
    this.#informerErrors = informer.informerErrors
    const leader = leaderCollectors(registers)
    this.#leaderStatus = leader.leaderStatus
    this.#leaderChanges = leader.leaderChanges
    this.#inProgressGauges(registers)
  }

  /**
   * client-go's gauges of work in progress, computed at each scrape from the keys being processed:
   * their summed age (`unfinished_work`) and the oldest one's (`longest_running_processor`). A
   * stuck worker shows as both growing without bound.
   */
  #inProgressGauges(registers: Registry[]): void {
    const ages = (name: string): number[] => {
      const now = this.#nowMs()
      return [...(this.#processing.get(name)?.values() ?? [])].map(
        (startMs) => (now - startMs) / 1000
      )
    }
    const processing = this.#processing
    new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
      labelNames: ['name'],
      registers,
      collect() {
        for (const name of processing.keys())
          this.set(
            { name },
            ages(name).reduce((a, b) => a + b, 0)
          )
      },
    })
    new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames: ['name'],
      registers,
      collect() {
        for (const name of processing.keys()) this.set({ name }, Math.max(0, ...ages(name)))
      },
    })
  }

  /** Returns the observer to pass to a {@link KubeTransport} for the cluster at `host`. */
  requestObserver(host: string): RequestObserver {
    return {
      onRequest: (info) => {
        const code = info.statusCode === undefined ? '<error>' : String(info.statusCode)
        this.#requests.inc({ code, method: info.method, host })
        this.#requestLatency.observe({ verb: info.method, host }, info.durationMs / 1000)
        this.#rateLimiterLatency.observe({ verb: info.method, host }, info.throttledMs / 1000)
      },
    }
  }

  /** Returns the metrics hooks for the work queue called `name`. */
  workQueue(name: string): WorkQueueMetrics {
    const labels = { name }
    const processing = new Map<string, number>()
    this.#processing.set(name, processing)
    return {
      onAdd: () => {
        this.#queueAdds.inc(labels)
      },
      onGet: (key, waitedMs) => {
        processing.set(key, this.#nowMs())
        this.#queueLatency.observe(labels, waitedMs / 1000)
      },
      onDone: (key, workMs) => {
        processing.delete(key)
        this.#queueWork.observe(labels, workMs / 1000)
      },
      onRetry: () => {
        this.#queueRetries.inc(labels)
      },
      depth: (n) => {
        this.#queueDepth.set(labels, n)
      },
    }
  }

  /** Returns the metrics hooks of the stall watch of the work queue called `name`. */
  queueStall(name: string): QueueStallMetrics {
    const labels = { name }
    return {
      oldestWait: (waitedMs) => {
        this.#queueOldestWait.set(labels, waitedMs / 1000)
      },
      stalled: () => {
        this.#queueStalls.inc(labels)
      },
    }
  }

  /** Returns the observer to pass to informers; labels carry each informer's description. */
  informerObserver(next?: InformerObserver): InformerObserver {
    return {
      onRelist: (resource: string, reason: InformerRestartReason) => {
        this.#relists.inc({ resource, reason })
        next?.onRelist?.(resource, reason)
      },
      onWatchRestart: (resource: string, reason: InformerRestartReason) => {
        this.#watchRestarts.inc({ resource, reason })
        next?.onWatchRestart?.(resource, reason)
      },
      onError: (resource, error, retryInMs) => {
        this.#informerErrors.inc({ resource })
        next?.onError?.(resource, error, retryInMs)
      },
      onHandlerError: (resource, error) => {
        next?.onHandlerError?.(resource, error)
      },
      onWatchListFallback: (resource, error) => {
        next?.onWatchListFallback?.(resource, error)
      },
    }
  }

  /** Records that this replica started (`true`) or stopped (`false`) leading the lease `name`. */
  leadership(name: string, leading: boolean): void {
    this.#leaderStatus.set({ name }, leading ? 1 : 0)
    this.#leaderChanges.inc({ name, change: leading ? 'started' : 'stopped' })
  }

  /** Marks the lease `name` as not led by this replica, before any election result. */
  leadershipCandidate(name: string): void {
    this.#leaderStatus.set({ name }, 0)
  }

  /** Sums the API requests made so far: all of them, and the writes (everything but GET). */
  async requestTotals(): Promise<{ total: number; writes: number }> {
    const { values } = await this.#requests.get()
    let total = 0
    let writes = 0
    for (const { value, labels } of values) {
      total += value
      if (labels.method !== 'GET') writes += value
    }
    return { total, writes }
  }

  /** Renders every metric in the Prometheus text format. */
  render(): Promise<string> {
    return this.registry.metrics()
  }
}
