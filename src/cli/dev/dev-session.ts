/**
 * A `metactl dev` session: the project's controllers served in-process by an engine on the dev
 * cluster, their hooks reloaded when a source file changes.
 *
 * @remarks
 * A reload swaps the hook functions and restarts only the controllers' loops: the session holds
 * its own lease on every informer they use, so the caches stay warm, and re-subscribing replays
 * every parent, so each one is synced again with the new hook.
 *
 * @module
 */
import type { CompositeSyncRequest } from '../../api/hook-model.js'
import type { KubeObject } from '../../core/kube-object.js'
import { Engine } from '../../engine/index.js'
import type { CompositeHooks } from '../../engine/index.js'
import { createLogger } from '../../runtime/logger.js'
import { inProcessHooks } from '../../sdk/in-process.js'
import type { CliIo } from '../cli-io.js'
import { describeHookError } from './hook-error.js'
import type { HookModule, LoadedHooks } from './hook-module.js'
import type { DevCluster } from './dev-cluster.js'
import { SyncReporter } from './sync-report.js'

type Lease = Awaited<ReturnType<Engine['context']['informers']['acquire']>>

/** Options of {@link DevSession.start}. */
export interface DevSessionOptions {
  readonly cluster: DevCluster
  readonly controllers: readonly KubeObject[]
  readonly module: HookModule
  readonly projectDir: string
  readonly io: CliIo
}

/** A running dev session. */
export class DevSession {
  readonly #options: DevSessionOptions
  readonly #engine: Engine
  readonly #reporter: SyncReporter
  readonly #leases: Lease[] = []
  #hooks: LoadedHooks = {}
  #reloads: Promise<void> = Promise.resolve()

  private constructor(options: DevSessionOptions, engine: Engine) {
    this.#options = options
    this.#engine = engine
    this.#reporter = new SyncReporter((line) => {
      options.io.out(line)
    })
  }

  /** Loads the hooks, starts the engine and every controller of the project. */
  static async start(options: DevSessionOptions): Promise<DevSession> {
    const log = createLogger({
      level: 'warn',
      format: 'text',
      write: (line) => {
        options.io.err(line)
      },
    })
    const engine = new Engine(options.cluster.config, {
      watchCompositeControllers: false,
      discoveryIntervalMs: 2000,
      log,
    })
    const session = new DevSession(options, engine)
    session.#hooks = await options.module.load()
    await engine.start()
    try {
      await session.#holdInformers()
      for (const controller of options.controllers) await session.#add(controller)
    } catch (error) {
      await session.stop()
      throw error
    }
    return session
  }

  /** Loads the hooks again and, when they load, re-syncs every parent with them. */
  reload(reason: string): Promise<void> {
    this.#reloads = this.#reloads.then(() => this.#reload(reason))
    return this.#reloads
  }

  /** Stops the controllers and the engine; the cluster keeps running. */
  async stop(): Promise<void> {
    await this.#reloads.catch(() => undefined)
    await this.#engine.stop()
    await Promise.all(this.#leases.map((lease) => lease.release()))
    this.#leases.length = 0
  }

  async #reload(reason: string): Promise<void> {
    const { io, module, projectDir, controllers } = this.#options
    const started = Date.now()
    let hooks: LoadedHooks
    try {
      hooks = await module.load()
    } catch (error) {
      const [first = '', ...rest] = describeHookError(error, projectDir)
      io.out(
        `reload of ${module.shown} failed (${reason}); the previous hooks keep running: ${first}`
      )
      for (const line of rest) io.out(line)
      return
    }
    this.#hooks = hooks
    for (const controller of controllers) {
      await this.#engine.removeCompositeController(controller.metadata.name ?? '')
      await this.#add(controller)
    }
    this.#reporter.reset()
    io.out(
      `reloaded ${module.shown} (${reason}) in ${Date.now() - started} ms; syncing every parent again`
    )
  }

  /** Leases the parent and child informers, so that restarting a controller keeps its caches. */
  async #holdInformers(): Promise<void> {
    const { discovery, informers } = this.#engine.context
    for (const controller of this.#options.controllers) {
      const spec = controller['spec'] as {
        parentResource?: { apiVersion: string; resource: string }
        childResources?: { apiVersion: string; resource: string }[]
      }
      for (const rule of [spec.parentResource, ...(spec.childResources ?? [])]) {
        if (rule === undefined) continue
        const info = await discovery.resolveResource(rule.apiVersion, rule.resource)
        this.#leases.push(informers.acquire(info.ref))
      }
    }
  }

  async #add(controller: KubeObject): Promise<void> {
    await this.#engine.addCompositeController({
      name: controller.metadata.name ?? '',
      spec: controller['spec'],
      hooks: this.#reporting(),
    })
  }

  /** The current hooks, adapted for the engine, with each sync reported. */
  #reporting(): CompositeHooks {
    const adapted = inProcessHooks(this.#hooks)
    const report =
      (call: NonNullable<typeof adapted.sync>): NonNullable<CompositeHooks['sync']> =>
      async (request: CompositeSyncRequest, signal: AbortSignal) => {
        try {
          const response = await call(request, signal)
          this.#reporter.synced(request, response)
          return response
        } catch (error) {
          this.#reporter.failed(request, describeHookError(error, this.#options.projectDir))
          throw error
        }
      }
    return {
      ...(adapted.sync === undefined ? {} : { sync: report(adapted.sync) }),
      ...(adapted.finalize === undefined ? {} : { finalize: report(adapted.finalize) }),
      ...(adapted.customize === undefined ? {} : { customize: adapted.customize }),
    }
  }
}
