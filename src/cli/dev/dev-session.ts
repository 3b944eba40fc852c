/**
 * A `metactl dev` session: the project's CompositeControllers and DecoratorControllers served
 * in-process by an engine on the dev cluster, their hooks reloaded when a source file changes and
 * the controllers themselves when a manifest changes.
 *
 * @remarks
 * A reload restarts only the controllers' loops: the session holds its own lease on every
 * informer they use, so the caches stay warm, and re-subscribing replays every parent, so each
 * one is synced again. Reloads run one at a time, in the order they were asked for.
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { KubeObject } from '../../core/kube-object.js'
import { installCrds } from '../../cluster/install-crds.js'
import { Engine } from '../../engine/index.js'
import type { SyncReport } from '../../engine/index.js'
import { inProcessHooksOf } from '../../sdk/in-process.js'
import type { CliIo } from '../cli-io.js'
import { controllerHooks, HookExportError } from '../../sdk/hook-exports.js'
import { CliError } from '../cli-error.js'
import type { ControllerHookFunctions } from '../../sdk/hook-exports.js'
import type { DevCluster } from './dev-cluster.js'
import { devLogger } from './dev-logger.js'
import { checkEngineRights } from './check-engine-rights.js'
import { describeHookError } from './hook-error.js'
import type { HookModule } from './hook-module.js'
import type { ProjectManifests } from './project-manifests.js'
import { describeSyncReport, SyncReporter } from './sync-report.js'
import { messageOf } from '../../core/message-of.js'

type Lease = Awaited<ReturnType<Engine['context']['informers']['acquire']>>

/** Options of {@link DevSession.start}. */
export interface DevSessionOptions {
  readonly cluster: DevCluster
  readonly manifests: ProjectManifests
  readonly module: HookModule
  readonly projectDir: string
  readonly io: CliIo
  /** Show the engine's own log lines (info and up) besides the sync lines. */
  readonly verbose: boolean
  /** The manifest directory as the user sees it (`deploy`), for the fixes the warnings name. */
  readonly manifestDir: string
}

const nameOf = (object: KubeObject): string => object.metadata.name ?? ''

/** The resources a controller's loop watches: parents or targets, children or attachments. */
function watchedRules(controller: KubeObject): { apiVersion: string; resource: string }[] {
  const spec = controller['spec'] as Record<string, unknown> | undefined
  const rules = [
    spec?.['parentResource'],
    ...((spec?.['childResources'] as unknown[] | undefined) ?? []),
    ...((spec?.['resources'] as unknown[] | undefined) ?? []),
    ...((spec?.['attachments'] as unknown[] | undefined) ?? []),
  ]
  return rules.filter(
    (rule): rule is { apiVersion: string; resource: string } =>
      typeof rule === 'object' &&
      rule !== null &&
      typeof (rule as Record<string, unknown>)['apiVersion'] === 'string' &&
      typeof (rule as Record<string, unknown>)['resource'] === 'string'
  )
}

/** A message for a person, on the line it is part of: an error's first line, never its stack. */
const firstLineOf = (error: unknown): string => messageOf(error).split('\n')[0] ?? ''

/** A running dev session. */
export class DevSession {
  readonly #options: DevSessionOptions
  readonly #engine: Engine
  readonly #reporter: SyncReporter
  /** The informer leases of each running controller, by name. */
  readonly #leases = new Map<string, Lease[]>()
  /** The controllers running, by name, as they were defined when started. */
  readonly #running = new Map<string, KubeObject>()
  #manifests: ProjectManifests
  #exports: Readonly<Record<string, unknown>> = {}
  #hooks = new Map<string, ControllerHookFunctions>()
  #reloads: Promise<void> = Promise.resolve()

  private constructor(options: DevSessionOptions) {
    this.#options = options
    this.#manifests = options.manifests
    this.#reporter = new SyncReporter((line) => {
      options.io.out(line)
    })
    this.#engine = new Engine(options.cluster.config, {
      watchCompositeControllers: false,
      watchDecoratorControllers: false,
      discoveryIntervalMs: 2000,
      log: devLogger(options.verbose, options.io, this.#reporter),
      onSync: (report) => {
        this.#report(report)
      },
    })
  }

  /** Loads the hooks, starts the engine and every controller of the project. */
  static async start(options: DevSessionOptions): Promise<DevSession> {
    const session = new DevSession(options)
    session.#exports = await options.module.load()
    try {
      session.#hooks = controllerHooks(
        session.#exports,
        options.manifests.controllers,
        options.module.shown
      )
    } catch (error) {
      // Words for the terminal: which export to add.
      if (error instanceof HookExportError) throw new CliError(error.message)
      throw error
    }
    await session.#engine.start()
    for (const controller of options.manifests.controllers) {
      const failure = await session.#tryStart(controller)
      // A bad controller does not stop the others; fixing the manifest starts it.
      if (failure !== undefined) session.#say(failure)
    }
    await session.#checkRights()
    return session
  }

  /** The names of the running controllers, with the hook export each one uses. */
  describeControllers(): string {
    const running = [...this.#running.values()].map(
      (c) => `${nameOf(c)} (${c.kind}; hooks: ${this.#hooks.get(nameOf(c))?.from ?? '?'})`
    )
    // Every controller failed to start: the lines above say why, a saved fix starts them.
    return running.length === 0 ? 'no controller yet' : running.join(', ')
  }

  /** Loads the hooks again and, when they load, re-syncs every parent with them. */
  reloadHooks(reason: string): Promise<void> {
    this.#reloads = this.#reloads.then(() => this.#reloadHooks(reason))
    return this.#reloads
  }

  /**
   * Reads the manifests again (`read` throws what is wrong with them), applies the CRDs that
   * changed and restarts the controllers that changed.
   */
  reloadManifests(reason: string, read: () => ProjectManifests): Promise<void> {
    this.#reloads = this.#reloads.then(() => this.#reloadManifests(reason, read))
    return this.#reloads
  }

  /** Stops the controllers and the engine; the cluster keeps running. */
  async stop(): Promise<void> {
    await this.#reloads.catch(() => undefined)
    this.#reporter.flush()
    await this.#engine.stop()
    const leases = [...this.#leases.values()].flat()
    this.#leases.clear()
    await Promise.all(leases.map((lease) => lease.release()))
  }

  #report(report: SyncReport): void {
    const lines = describeSyncReport(report, this.#options.projectDir)
    if (lines === undefined) return
    const { metadata } = report.parent
    const subject = `${report.controller.name} ${report.parent.kind} ${metadata.namespace ?? ''}/${nameOf(report.parent)}`
    this.#reporter.print(subject, lines)
  }

  /** Prints a session line (a reload), after the counts of any collapsed sync line. */
  #say(line: string): void {
    this.#reporter.announce([line])
  }

  async #reloadHooks(reason: string): Promise<void> {
    const { module, projectDir } = this.#options
    const startedMs = Date.now()
    let hooks: Map<string, ControllerHookFunctions>
    try {
      const exports = await module.load()
      hooks = controllerHooks(exports, this.#manifests.controllers, module.shown)
      this.#exports = exports
    } catch (error) {
      const [first = '', ...rest] = describeHookError(error, projectDir)
      this.#say(
        `reload of ${module.shown} failed (${reason}); the previous hooks keep running: ${first}`
      )
      for (const line of rest) this.#options.io.out(line)
      return
    }
    this.#hooks = hooks
    const failures: string[] = []
    for (const controller of this.#manifests.controllers) {
      await this.#detach(nameOf(controller))
      const failure = await this.#tryStart(controller)
      if (failure !== undefined) failures.push(failure)
    }
    this.#say(
      `reloaded ${module.shown} (${reason}) in ${Date.now() - startedMs} ms; syncing every parent again` +
        failures.map((failure) => `; ${failure}`).join('')
    )
  }

  async #reloadManifests(reason: string, read: () => ProjectManifests): Promise<void> {
    const shown = this.#options.module.shown
    let next: ProjectManifests
    let hooks: Map<string, ControllerHookFunctions>
    try {
      next = read()
      hooks = controllerHooks(this.#exports, next.controllers, shown)
    } catch (error) {
      this.#say(
        `reload of the manifests failed (${reason}); the previous controllers keep running: ${firstLineOf(error)}`
      )
      return
    }
    const changes: string[] = []
    const crds = next.crds.filter(
      (crd) => !this.#manifests.crds.some((old) => isDeepStrictEqual(old, crd))
    )
    try {
      if (crds.length > 0) await installCrds(this.#options.cluster.client, crds)
    } catch (error) {
      this.#say(
        `reload of the manifests failed (${reason}); the previous controllers keep running: ${firstLineOf(error)}`
      )
      return
    }
    if (crds.length > 0)
      changes.push(`applied ${crds.map((crd) => `CRD ${nameOf(crd)}`).join(', ')}`)
    this.#manifests = next
    this.#hooks = hooks
    changes.push(...(await this.#swapControllers(next.controllers, crds.length > 0)))
    this.#say(
      `reloaded the manifests (${reason}): ${changes.length === 0 ? 'nothing changed' : changes.join('; ')}`
    )
    await this.#checkRights()
  }

  /**
   * Warns of every right a controller needs that the engine would lack where it is deployed: dev's
   * own engine runs with the user's credentials, so it would never be refused here.
   */
  async #checkRights(): Promise<void> {
    const { cluster, manifestDir } = this.#options
    let lines: string[]
    try {
      lines = await checkEngineRights(cluster.client, this.#manifests, manifestDir)
    } catch (error) {
      lines = [`warning: could not check the rights of the engine: ${firstLineOf(error)}`]
    }
    for (const line of lines) this.#say(line)
  }

  /**
   * Stops the controllers that are gone, restarts the changed ones (every one when a CRD
   * changed), starts the new ones and the ones that failed to start before; returns what it did,
   * for the reload's line.
   */
  async #swapControllers(next: readonly KubeObject[], crdsChanged: boolean): Promise<string[]> {
    const done = { restarted: [] as string[], started: [] as string[], stopped: [] as string[] }
    const failures: string[] = []
    for (const name of [...this.#running.keys()]) {
      if (next.some((c) => nameOf(c) === name)) continue
      await this.#stop(name)
      done.stopped.push(name)
    }
    for (const controller of next) {
      const running = this.#running.get(nameOf(controller))
      if (running !== undefined && !crdsChanged && isDeepStrictEqual(running, controller)) continue
      if (running !== undefined) await this.#detach(nameOf(controller))
      const failure = await this.#tryStart(controller)
      if (failure !== undefined) failures.push(failure)
      else (running === undefined ? done.started : done.restarted).push(nameOf(controller))
    }
    return [
      ...Object.entries(done)
        .filter(([, names]) => names.length > 0)
        .map(([verb, names]) => `${verb} ${names.join(', ')}`),
      ...failures,
    ]
  }

  /** Starts a controller; returns why it could not, for a line. */
  async #tryStart(controller: KubeObject): Promise<string | undefined> {
    try {
      await this.#start(controller)
      return undefined
    } catch (error) {
      await this.#stop(nameOf(controller))
      return `${controller.kind} ${nameOf(controller)} not started: ${firstLineOf(error)}`
    }
  }

  /**
   * Starts one controller with its hooks, after leasing the informers it watches; the leases it
   * held before are released only then, so the informers both use stay warm across a restart.
   */
  async #start(controller: KubeObject): Promise<void> {
    const { discovery, informers } = this.#engine.context
    const name = nameOf(controller)
    const previous = this.#leases.get(name) ?? []
    const leases: Lease[] = []
    this.#leases.set(name, leases)
    try {
      for (const rule of watchedRules(controller)) {
        const info = await discovery.resolveResource(rule.apiVersion, rule.resource)
        leases.push(informers.acquire(info.ref))
      }
    } finally {
      await Promise.all(previous.map((lease) => lease.release()))
    }
    await this.#add(controller)
    this.#running.set(name, controller)
  }

  async #add(controller: KubeObject): Promise<void> {
    const name = nameOf(controller)
    const functions = this.#hooks.get(name)
    if (functions === undefined) throw new Error(`no hooks for ${name}`)
    const definition = { name, spec: controller['spec'] }
    if (controller.kind === 'DecoratorController') {
      await this.#engine.addDecoratorController({
        ...definition,
        hooks: inProcessHooksOf('DecoratorController', functions),
      })
      return
    }
    await this.#engine.addCompositeController({
      ...definition,
      hooks: inProcessHooksOf('CompositeController', functions),
    })
  }

  /** Stops a controller, if it runs, keeping its informer leases for its restart. */
  async #detach(name: string): Promise<void> {
    this.#running.delete(name)
    await this.#engine.removeCompositeController(name)
  }

  /** Stops a controller, if it runs, and releases its informer leases. */
  async #stop(name: string): Promise<void> {
    await this.#detach(name)
    const leases = this.#leases.get(name) ?? []
    this.#leases.delete(name)
    await Promise.all(leases.map((lease) => lease.release()))
  }
}
