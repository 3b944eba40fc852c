/**
 * Runs one hosted controller of any kind on a {@link FakeCluster}: the real informers, the real
 * `ParentController` and the kind a {@link KindAdapter} builds, with in-process hooks that tests
 * swap at will and a record of every hook call and loop outcome.
 *
 * @module
 */
import type { JsonObject, KubeObject } from '../../core/kube-object.js'
import { objectKey } from '../../core/object-key.js'
import type { UpdateMethod } from '../../api/composite-controller-spec.js'
import type { LabelSelectorSpec } from '../../api/hook-model.js'
import type { ObjectClient } from '../../kube/object-client.js'
import type { ResourceInfo } from '../../kube/resource-map.js'
import type { Outcome } from '../../runtime/queue/controller-loop.js'
import { FakeClock } from '../../runtime/clock/fake-clock.js'
import type { Logger } from '../../runtime/diagnostics/logger.js'
import { silentLogger } from '../../runtime/diagnostics/logger.js'
import { SharedInformers } from '../../runtime/informers/shared-informers.js'
import type { EventSink } from '../events/event-recorder.js'
import type { ControllerKind } from '../loop/parent-controller.js'
import { ParentController } from '../loop/parent-controller.js'
import { FakeCluster } from '../../in-memory/fake-cluster.js'
import { RecordingEventSink } from './recording-event-sink.js'

/** What a hook sees, whatever the kind: the subject (parent or target) and what it owns. */
export interface ConformanceRequest {
  /** The parent (CompositeController) or target object (DecoratorController). */
  readonly subject: KubeObject
  /** The observed children or attachments of every declared type. */
  readonly observed: readonly KubeObject[]
  /** True when the finalize hook is the one called. */
  readonly finalizing: boolean
}

/** A hook's answer, whatever the kind; the adapter turns it into its kind's response. */
export interface ConformanceAnswer {
  /** The desired children or attachments. */
  readonly desired: readonly KubeObject[]
  /** Status fields the subject must show after the sync (absent: none asked for). */
  readonly status?: JsonObject
  /** Releases the subject's finalizer (false). */
  readonly finalized?: boolean
  /** One-shot delayed resync in ms (0: none). */
  readonly resyncAfterMs?: number
}

/** An in-process hook in the kind-neutral shape. */
export type ConformanceHook = (
  request: ConformanceRequest
) => ConformanceAnswer | Promise<ConformanceAnswer>

/** What an adapter gets to build its kind. */
export interface KindBuildOptions {
  /** Where the kind writes: the fake cluster. */
  readonly client: ObjectClient
  readonly informers: SharedInformers
  readonly events: EventSink
  readonly log: Logger
  readonly sync: ConformanceHook
  /** Enables the finalize hook (and so the finalizer) when present. */
  readonly finalize?: ConformanceHook
  /** The update method of the declared child type. */
  readonly updateMethod: UpdateMethod
  /** Only subjects whose labels match are the controller's (the subject rule's labelSelector). */
  readonly subjectSelector?: LabelSelectorSpec
  /** Periodic resync of every subject, in ms, taken as is (no clamping). */
  readonly resyncPeriodMs?: number
}

/**
 * Teaches the conformance suite one controller kind: its resources, how its subjects and
 * desired children look, and how to build its {@link ControllerKind} from kind-neutral hooks.
 */
export interface KindAdapter {
  /** Suite title, e.g. `CompositeController (spec.selector)`. */
  readonly name: string
  /** The subject resource: the parent or target resource. */
  readonly subject: ResourceInfo
  /** The one declared child (attachment) resource. */
  readonly child: ResourceInfo
  /** The finalizer the kind puts on subjects when it has a finalize hook. */
  readonly finalizer: string
  /** The work-queue key of a subject (`namespace/name` for a composite parent). */
  queueKey(namespace: string, name: string): string
  /** A new subject; `labels` decide whether it is in a `subjectSelector` scope. */
  subjectObject(name: string, namespace: string, labels: Record<string, string>): KubeObject
  /** A desired child of the declared type that this subject's controller accepts. */
  desiredChild(subject: KubeObject, name: string, data: Record<string, string>): KubeObject
  /** A desired child of a type the controller did not declare. */
  undeclaredChild(subject: KubeObject, name: string): KubeObject
  /** Builds the kind under test; its hooks must call `sync` and `finalize` as they are now. */
  kind(options: KindBuildOptions): ControllerKind
}

/** Options of {@link ConformanceHarness.start}. */
export interface HarnessOptions {
  /** Enables a finalize hook (false). */
  readonly finalize?: boolean
  /** Update method of the child type (InPlace). */
  readonly updateMethod?: UpdateMethod
  readonly subjectSelector?: LabelSelectorSpec
  readonly resyncPeriodMs?: number
}

/** One hook call, as the hook saw it. */
export interface HookCall {
  readonly hook: 'sync' | 'finalize'
  readonly request: ConformanceRequest
  /** `performance.now()` when the hook was called. */
  readonly at: number
}

/** One finished sync, as the loop classified it. */
export interface RecordedOutcome {
  readonly key: string
  readonly outcome: Outcome
  /** `performance.now()` when the sync ended. */
  readonly at: number
}

/** The namespace every subject of the suite lives in. */
export const CONFORMANCE_NAMESPACE = 'conformance'

/** A running controller on a fake cluster, with swappable hooks and records of what happened. */
export class ConformanceHarness {
  readonly cluster: FakeCluster
  /** The informers' clock: their idle watchdog and backoff wait on it, so never fire. */
  readonly clock: FakeClock = new FakeClock(Date.UTC(2026, 0, 1))
  readonly events: RecordingEventSink = new RecordingEventSink()
  readonly calls: HookCall[] = []
  readonly outcomes: RecordedOutcome[] = []
  /** The sync hook; tests replace it to change the answer. */
  sync: ConformanceHook = () => ({ desired: [] })
  /** The finalize hook (used when the harness was started with `finalize: true`). */
  finalize: ConformanceHook = () => ({ desired: [], finalized: true })
  readonly #adapter: KindAdapter
  readonly #informers: SharedInformers
  #controller: ParentController | undefined
  #inFlight = 0

  private constructor(adapter: KindAdapter) {
    this.#adapter = adapter
    this.cluster = new FakeCluster({ clock: this.clock })
    this.#informers = new SharedInformers(this.cluster.listWatcherFactory(), { clock: this.clock })
  }

  /** Builds the adapter's kind on a fresh fake cluster and starts its loop. */
  static async start(
    adapter: KindAdapter,
    options: HarnessOptions = {}
  ): Promise<ConformanceHarness> {
    const harness = new ConformanceHarness(adapter)
    const kind = adapter.kind({
      client: harness.cluster,
      informers: harness.#informers,
      events: harness.events,
      log: silentLogger,
      sync: harness.#recorded('sync'),
      ...(options.finalize === true ? { finalize: harness.#recorded('finalize') } : {}),
      updateMethod: options.updateMethod ?? 'InPlace',
      ...(options.subjectSelector === undefined
        ? {}
        : { subjectSelector: options.subjectSelector }),
      ...(options.resyncPeriodMs === undefined ? {} : { resyncPeriodMs: options.resyncPeriodMs }),
    })
    harness.#controller = new ParentController({
      kind,
      informers: harness.#informers,
      observer: {
        onOutcome: (key, outcome) => {
          harness.outcomes.push({ key, outcome, at: performance.now() })
        },
      },
    })
    await harness.#controller.start()
    return harness
  }

  /** Creates a subject in {@link CONFORMANCE_NAMESPACE}; returns it as stored. */
  createSubject(name: string, labels: Record<string, string> = {}): Promise<KubeObject> {
    const object = this.#adapter.subjectObject(name, CONFORMANCE_NAMESPACE, labels)
    return this.cluster.create(this.#adapter.subject.ref, object)
  }

  /** Starts deleting a subject. */
  async deleteSubject(name: string): Promise<void> {
    await this.cluster.delete(this.#adapter.subject.ref, name, { namespace: CONFORMANCE_NAMESPACE })
  }

  /** The stored subject, or undefined when it is gone. */
  subject(name: string): KubeObject | undefined {
    return this.cluster.peek(this.#adapter.subject.ref, name, CONFORMANCE_NAMESPACE)
  }

  /** Every stored object of the declared child type, sorted by key. */
  children(): KubeObject[] {
    return this.cluster.objects(this.#adapter.child.ref)
  }

  /** Queues a subject's key, as a resync or an unrelated event would. */
  poke(name: string): void {
    this.#controller?.enqueue(this.#adapter.queueKey(CONFORMANCE_NAMESPACE, name))
  }

  /** Waits until watch delivery, syncs, hooks and writes have all come to rest. */
  settle(): Promise<void> {
    return this.cluster.settle({ busy: () => this.#inFlight > 0 })
  }

  /** Waits, in real time, until `predicate` holds; rejects naming `what` after `timeoutMs`. */
  async waitFor(predicate: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
    const deadline = performance.now() + timeoutMs
    while (!predicate()) {
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
  }

  /** The hook calls about one subject. */
  callsFor(name: string): HookCall[] {
    const key = `${CONFORMANCE_NAMESPACE}/${name}`
    return this.calls.filter((c) => objectKey(c.request.subject) === key)
  }

  /** Closes the cluster (so a controller stuck in a write loop stops), then the loop and informers. */
  async stop(): Promise<void> {
    this.cluster.close()
    await this.#controller?.stop()
    await this.#informers.stopAll()
  }

  #recorded(hook: 'sync' | 'finalize'): ConformanceHook {
    return async (request) => {
      this.#inFlight++
      try {
        this.calls.push({ hook, request, at: performance.now() })
        // Read at call time, so that a test's swap takes effect on the next sync.
        return await this[hook](request)
      } finally {
        this.#inFlight--
      }
    }
  }
}
