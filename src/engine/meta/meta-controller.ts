/**
 * The meta level: watches one kind of controller object (CompositeController or
 * DecoratorController) and runs one hosted controller per object: started when the object
 * appears, restarted when its `.spec` changes, stopped when it is deleted. A bad spec gets a
 * Warning Event and a log line, and never stops the other controllers.
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { KubeObject } from '../../core/kube-object.js'
import { ControllerSpecError } from '../../api/controller-spec-error.js'
import type { ResourceRef } from '../../kube/dynamic-client.js'
import { Action, ControllerLoop } from '../../runtime/queue/controller-loop.js'
import { TerminalError } from '../../runtime/queue/reconcile-errors.js'
import type { InformerLease } from '../../runtime/informers/shared-informers.js'
import { WorkQueue } from '../../runtime/queue/work-queue.js'
import { UnknownResourceError } from '../../kube/unknown-resource-error.js'
import type { EngineContext } from '../engine-context.js'
import type { CredentialReader } from '../hooks/webhook-credentials.js'
import type { HostedController } from '../loop/start-hosted-controller.js'
import { CredentialWatch } from './credential-watch.js'
import type { CredentialRef } from './credential-watch.js'
import { hookMetricsFor } from '../metrics/hook-metrics.js'
import { messageOf } from '../../core/message-of.js'

/** How often discovery is refreshed while a controller waits for a resource (2 s). */
export const WAITING_DISCOVERY_INTERVAL_MS = 2000

/** An error and its causes, outermost first. */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = []
  for (let e = error; e !== undefined && chain.length < 10;) {
    chain.push(e)
    e = e instanceof Error ? e.cause : undefined
  }
  return chain
}

/** What the meta level needs to know about one kind of controller object. */
export interface MetaKind<Definition> {
  /** `CompositeController` or `DecoratorController`, for the queue name and logs. */
  readonly kind: string
  /** The controller objects' resource. */
  readonly resource: ResourceRef
  /**
   * Builds a definition from a controller object: parses its spec and builds its hooks, reading
   * the Secrets and ConfigMaps their TLS and auth settings name through `credentials`.
   *
   * @throws ControllerSpecError for a spec that cannot run.
   * @throws WebhookCredentialError for TLS or auth settings that cannot be resolved.
   */
  define(
    name: string,
    object: KubeObject,
    context: EngineContext,
    credentials: CredentialReader
  ): Promise<Definition>
  /** Starts a definition's hosted controller; resolves once it runs. */
  start(
    context: EngineContext,
    definition: Definition,
    signal: AbortSignal
  ): Promise<HostedController>
}

interface Running {
  readonly spec: unknown
  readonly hosted: HostedController
  /** The resourceVersions of the Secrets and ConfigMaps its hooks were built from. */
  readonly credentials: string
}

/** Several workers: one controller whose caches are slow to sync does not hold up the rest. */
const META_WORKERS = 4

/** Runs the hosted controllers of every controller object of one kind in the cluster. */
export class MetaController<Definition> {
  readonly #context: EngineContext
  readonly #meta: MetaKind<Definition>
  readonly #queue: WorkQueue
  readonly #loop: ControllerLoop
  readonly #running = new Map<string, Running>()
  readonly #lastSeen = new Map<string, KubeObject>()
  /** The Secrets and ConfigMaps each controller's hooks read, whether it runs or failed. */
  readonly #refs = new Map<string, Set<CredentialRef>>()
  readonly #credentials: CredentialWatch
  #lease: InformerLease | undefined
  #unsubscribe: (() => void) | undefined
  /** Controllers whose last start failed on a resource discovery did not know. */
  readonly #waiting = new Set<string>()
  #waitTimer: NodeJS.Timeout | undefined
  #unsubscribeDiscovery: (() => void) | undefined

  constructor(context: EngineContext, meta: MetaKind<Definition>) {
    this.#context = context
    this.#meta = meta
    this.#credentials = new CredentialWatch(context.informers, (ref) => {
      for (const [name, refs] of this.#refs) if (refs.has(ref)) this.#queue.add(name)
    })
    const name = `${meta.kind.toLowerCase()}-metacontroller`
    this.#queue = new WorkQueue({
      name,
      ...(context.metrics === undefined ? {} : { metrics: context.metrics.workQueue(name) }),
    })
    this.#loop = new ControllerLoop({
      queue: this.#queue,
      ...(context.metrics === undefined
        ? {}
        : {
            observer: hookMetricsFor(context.metrics.registry).reconcileObserver(
              name,
              META_WORKERS
            ),
          }),
      workers: META_WORKERS,
      reconcile: (name, reconcileContext) => this.#reconcile(name, reconcileContext.signal),
    })
  }

  /** Starts watching the controller objects; resolves once the first list is handled. */
  async start(signal?: AbortSignal): Promise<void> {
    const { informers, targetSelector } = this.#context
    this.#lease = informers.acquire(this.#meta.resource)
    const enqueue = (o: KubeObject): void => {
      if (!targetSelector(o.metadata.labels ?? {})) return
      this.#lastSeen.set(o.metadata.name ?? '', o)
      this.#queue.add(o.metadata.name ?? '')
    }
    this.#unsubscribe = this.#lease.informer.subscribe({
      onAdd: enqueue,
      onUpdate: (_old, o) => {
        enqueue(o)
      },
      onDelete: enqueue,
    })
    this.#unsubscribeDiscovery = this.#context.discovery.onChange(() => {
      // New resources may be what a waiting controller needs: retry it now, not after backoff.
      for (const name of this.#waiting) this.#queue.add(name)
    })
    await this.#lease.informer.waitForSync(signal)
    this.#loop.start()
  }

  /** The controller objects this engine serves (its `--target-label-selector` applied). */
  controllerObjects(): KubeObject[] {
    const { targetSelector } = this.#context
    return (this.#lease?.informer.store.list() ?? []).filter((o) =>
      targetSelector(o.metadata.labels ?? {})
    )
  }

  /** Names of the running hosted controllers. */
  runningControllers(): string[] {
    return [...this.#running.keys()].sort()
  }

  async #reconcile(name: string, signal: AbortSignal): Promise<Action> {
    const object = this.#lease?.informer.store.get(name)
    const running = this.#running.get(name)
    if (object === undefined) {
      this.#waiting.delete(name)
      await this.#deleted(name, running)
      return Action.awaitChange()
    }
    const rawSpec = object['spec']
    if (running !== undefined && isDeepStrictEqual(running.spec, rawSpec)) {
      if (this.#credentialsOf(name) === running.credentials) return Action.awaitChange()
      // A referenced Secret or ConfigMap changed: build first, so that bad new credentials leave
      // the running controller as it is (the CreateError event says why).
      this.#context.log.info('webhook credentials changed; rebuilding the controller', {
        controller: name,
      })
      const definition = await this.#define(name, object)
      await this.#stopHosted(name, running)
      this.#context.events.record(object, 'Normal', 'Stopped', `Stopped controller: ${name}`)
      return this.#startHosted(name, object, rawSpec, definition, signal)
    }
    if (running !== undefined) {
      // A spec change restarts the controller; what it put on parents stays.
      await this.#stopHosted(name, running)
      this.#context.events.record(object, 'Normal', 'Stopped', `Stopped controller: ${name}`)
    }
    const definition = await this.#define(name, object)
    return this.#startHosted(name, object, rawSpec, definition, signal)
  }

  #credentialsOf(name: string): string {
    return this.#credentials.fingerprint(this.#refs.get(name) ?? [])
  }

  /** The controller object is gone: release what it put on parents, then stop it. */
  async #deleted(name: string, running: Running | undefined): Promise<void> {
    if (running !== undefined) {
      try {
        await running.hosted.release()
      } catch (error) {
        this.#context.log.warn('cannot release the finalizers of a deleted controller', {
          controller: name,
          error,
        })
      }
      await this.#stopHosted(name, running)
      const last = this.#lastSeen.get(name)
      if (last !== undefined)
        this.#context.events.record(last, 'Normal', 'Stopped', `Stopped controller: ${name}`)
    }
    this.#lastSeen.delete(name)
    this.#refs.delete(name)
  }

  async #define(name: string, object: KubeObject): Promise<Definition> {
    const refs = new Set<CredentialRef>()
    try {
      return await this.#meta.define(name, object, this.#context, this.#credentials.reader(refs))
    } catch (error) {
      const message = messageOf(error)
      this.#context.events.record(
        object,
        'Warning',
        'CreateError',
        `Cannot create new controller: ${message}`
      )
      this.#context.log.error('cannot create controller', { controller: name, error })
      // A bad spec cannot fix itself: wait for the object, or a Secret it names, to change.
      throw new TerminalError(message, { cause: error })
    } finally {
      this.#refs.set(name, refs)
    }
  }

  async #startHosted(
    name: string,
    object: KubeObject,
    rawSpec: unknown,
    definition: Definition,
    signal: AbortSignal
  ): Promise<Action> {
    const { events, log } = this.#context
    // Upstream's hosted controller announces itself as it starts, whether or not it then runs.
    events.record(object, 'Normal', 'Starting', `Starting controller: ${name}`)
    try {
      const hosted = await this.#meta.start(this.#context, definition, signal)
      this.#waiting.delete(name)
      this.#running.set(name, { spec: rawSpec, hosted, credentials: this.#credentialsOf(name) })
      events.record(object, 'Normal', 'Started', `Started controller: ${name}`)
      log.info('started controller', { controller: name, kind: this.#meta.kind })
      return Action.awaitChange()
    } catch (error) {
      events.record(object, 'Normal', 'Stopping', `Stopping controller: ${name}`)
      const message = messageOf(error)
      if (
        error instanceof ControllerSpecError &&
        error.message.includes("does not have subresource 'Status'")
      ) {
        events.record(object, 'Warning', 'SyncError', `[${name}] Sync error - ignoring, ${message}`)
        log.error('parent resource has no status subresource', { controller: name, error })
        throw new TerminalError(message, { cause: error })
      }
      if (error instanceof ControllerSpecError) {
        // A spec that cannot run (an invalid selector) waits for the object to change.
        events.record(object, 'Warning', 'CreateError', `Cannot create new controller: ${message}`)
        log.error('cannot create controller', { controller: name, error })
        throw new TerminalError(message, { cause: error })
      }
      if (!signal.aborted) this.#failedToStart(name, object, error)
      // Discovery may catch up (a CRD being installed): retry with backoff, and at once when
      // discovery sees a new resource.
      throw error
    }
  }

  /** Reports a failed start once per waiting period; a missing resource waits for discovery. */
  #failedToStart(name: string, object: KubeObject, error: unknown): void {
    const message = messageOf(error)
    const unknown = causeChain(error).some((e) => e instanceof UnknownResourceError)
    if (unknown) {
      const first = !this.#waiting.has(name)
      this.#waiting.add(name)
      this.#pollDiscovery()
      if (!first) return
    }
    this.#context.events.record(
      object,
      'Warning',
      'CreateError',
      `Cannot create new controller: ${message}`
    )
    if (unknown) {
      // Not a fault: a CRD being installed, or deleted and re-created (a restart can race it).
      this.#context.log.info('controller waits for discovery to serve its resources', {
        controller: name,
        reason: message,
      })
      return
    }
    this.#context.log.error('cannot create controller', { controller: name, error })
  }

  /**
   * While controllers wait for a resource, refreshes discovery every few seconds (not only every
   * `--discovery-interval`), so a controller applied before its CRD starts soon after the CRD.
   */
  #pollDiscovery(): void {
    if (this.#waitTimer !== undefined) return
    this.#waitTimer = setInterval(() => {
      if (this.#waiting.size === 0) {
        clearInterval(this.#waitTimer)
        this.#waitTimer = undefined
        return
      }
      this.#context.discovery.refresh().catch(() => undefined)
    }, WAITING_DISCOVERY_INTERVAL_MS)
    this.#waitTimer.unref()
  }

  async #stopHosted(name: string, running: Running): Promise<void> {
    this.#running.delete(name)
    await running.hosted.stop()
    // Upstream's hosted controller says so itself as it exits, before the meta level's `Stopped`.
    const object = this.#lastSeen.get(name)
    if (object !== undefined)
      this.#context.events.record(object, 'Normal', 'Stopping', `Stopping controller: ${name}`)
    this.#context.log.info('stopped controller', { controller: name, kind: this.#meta.kind })
  }

  /** Stops every hosted controller and the watch. */
  async stop(): Promise<void> {
    this.#unsubscribe?.()
    this.#unsubscribeDiscovery?.()
    if (this.#waitTimer !== undefined) clearInterval(this.#waitTimer)
    this.#waitTimer = undefined
    await this.#loop.stop()
    await Promise.all(
      [...this.#running.entries()].map(([name, running]) => this.#stopHosted(name, running))
    )
    await this.#lease?.release()
    this.#lease = undefined
    await this.#credentials.stop()
  }
}
