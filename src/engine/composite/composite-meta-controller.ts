/**
 * Watches CompositeController objects and runs one hosted controller per object: started when
 * the object appears, restarted when its `.spec` changes, stopped when it is deleted. A bad spec
 * gets a Warning Event and a log line, and never stops the other controllers.
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { KubeObject } from '../../core/kube-object.js'
import { ControllerSpecError } from '../../api/controller-spec-error.js'
import { parseCompositeControllerSpec } from '../../api/composite-controller-spec.js'
import { Action, ControllerLoop } from '../../runtime/controller-loop.js'
import { TerminalError } from '../../runtime/reconcile-errors.js'
import type { InformerLease } from '../../runtime/shared-informers.js'
import { WorkQueue } from '../../runtime/work-queue.js'
import type { CompositeControllerDefinition, EngineContext } from '../engine-context.js'
import { startCompositeController } from './start-composite-controller.js'
import type { HostedController } from './start-composite-controller.js'
import { webhookCompositeHooks } from '../hooks/webhook-hooks.js'
import { COMPOSITE_CONTROLLERS } from '../../kube/well-known-resources.js'

interface Running {
  readonly spec: unknown
  readonly hosted: HostedController
}

/** Runs the hosted controllers of every CompositeController in the cluster. */
export class CompositeMetaController {
  readonly #context: EngineContext
  readonly #queue: WorkQueue
  readonly #loop: ControllerLoop
  readonly #running = new Map<string, Running>()
  readonly #lastSeen = new Map<string, KubeObject>()
  #lease: InformerLease | undefined
  #unsubscribe: (() => void) | undefined

  constructor(context: EngineContext) {
    this.#context = context
    this.#queue = new WorkQueue({ name: 'composite-metacontroller' })
    this.#loop = new ControllerLoop({
      queue: this.#queue,
      // Several workers: one controller whose caches are slow to sync does not hold up the rest.
      workers: 4,
      reconcile: (name, context) => this.#reconcile(name, context.signal),
    })
  }

  /** Starts watching CompositeControllers; resolves once the first list is handled. */
  async start(signal?: AbortSignal): Promise<void> {
    const { informers, targetSelector } = this.#context
    this.#lease = informers.acquire(COMPOSITE_CONTROLLERS)
    const accept = (o: KubeObject): boolean => targetSelector(o.metadata.labels ?? {})
    const enqueue = (o: KubeObject): void => {
      if (!accept(o)) return
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
    await this.#lease.informer.waitForSync(signal)
    this.#loop.start()
  }

  /** Names of the running hosted controllers. */
  runningControllers(): string[] {
    return [...this.#running.keys()].sort()
  }

  async #reconcile(name: string, signal: AbortSignal): Promise<Action> {
    const { events, log } = this.#context
    const object = this.#lease?.informer.store.get(name)
    const running = this.#running.get(name)
    if (object === undefined) {
      if (running !== undefined) {
        await this.#stopHosted(name, running)
        const last = this.#lastSeen.get(name)
        if (last !== undefined)
          events.record(last, 'Normal', 'Stopped', `Stopped controller: ${name}`)
      }
      this.#lastSeen.delete(name)
      return Action.awaitChange()
    }
    const rawSpec = object['spec']
    if (running !== undefined && isDeepStrictEqual(running.spec, rawSpec))
      return Action.awaitChange()
    if (running !== undefined) {
      await this.#stopHosted(name, running)
      events.record(object, 'Normal', 'Stopped', `Stopped controller: ${name}`)
    }
    let definition: CompositeControllerDefinition
    try {
      const spec = parseCompositeControllerSpec(rawSpec)
      definition = {
        name,
        controller: { ...object, status: object['status'] ?? {} },
        spec,
        hooks: webhookCompositeHooks(spec, this.#context.log.child({ controller: name })),
        finalizerEnabled: spec.hooks.finalize !== undefined,
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      events.record(object, 'Warning', 'CreateError', `Cannot create new controller: ${message}`)
      log.error('cannot create controller', { controller: name, error })
      // A bad spec cannot fix itself: wait for the object to change.
      throw new TerminalError(message, { cause: error })
    }
    try {
      const hosted = await startCompositeController(this.#context, definition, signal)
      this.#running.set(name, { spec: rawSpec, hosted })
      events.record(object, 'Normal', 'Started', `Started controller: ${name}`)
      log.info('started controller', { controller: name })
      return Action.awaitChange()
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      if (
        error instanceof ControllerSpecError &&
        error.message.includes("does not have subresource 'Status'")
      ) {
        events.record(object, 'Warning', 'SyncError', `[${name}] Sync error - ignoring, ${message}`)
        log.error('parent resource has no status subresource', { controller: name, error })
        throw new TerminalError(message, { cause: error })
      }
      events.record(object, 'Warning', 'CreateError', `Cannot create new controller: ${message}`)
      log.error('cannot create controller', { controller: name, error })
      // Discovery may catch up (a CRD being installed): retry with backoff.
      throw error
    }
  }

  async #stopHosted(name: string, running: Running): Promise<void> {
    this.#running.delete(name)
    await running.hosted.stop()
    this.#context.log.info('stopped controller', { controller: name })
  }

  /** Stops every hosted controller and the watch. */
  async stop(): Promise<void> {
    this.#unsubscribe?.()
    await this.#loop.stop()
    await Promise.all(
      [...this.#running.entries()].map(([name, running]) => this.#stopHosted(name, running))
    )
    await this.#lease?.release()
    this.#lease = undefined
  }
}
