/**
 * The control plane this process starts and owns: it allocates ports, lays out the working
 * directory, starts each component in order and waits for it, and stops them all on `stop()`,
 * on SIGINT/SIGTERM and on process exit. The components' flags are in component-flags.ts, their
 * readiness probes in await-component-ready.ts, the credentials in control-plane-credentials.ts.
 *
 * @module
 */
import { mkdirSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ComponentProcesses } from './component-processes.js'
import type { ClusterConfig } from '../kube/cluster-config.js'
import { DynamicClient } from '../kube/dynamic-client.js'
import { KubeTransport } from '../kube/kube-transport.js'
import {
  apiServerReady,
  awaitComponentReady,
  awaitHealthz,
  etcdHealthy,
} from './await-component-ready.js'
import {
  apiServerFlags,
  controllerManagerFlags,
  etcdFlags,
  kwokFlags,
  schedulerFlags,
} from './component-flags.js'
import type { ControlPlaneLayout, ControlPlanePorts } from './component-flags.js'
import { KUBERNETES_VERSION, nodeBinariesFor } from './control-plane-binaries.js'
import type { ControlPlaneBinaries, NodeBinaries } from './control-plane-binaries.js'
import {
  newControlPlaneTokens,
  writeControlPlaneCredentials,
  writeControlPlaneKubeconfig,
} from './control-plane-credentials.js'
import type { ControlPlaneTokens } from './control-plane-credentials.js'
import type { ControlPlane, ControlPlaneOptions } from './control-plane-options.js'
import { ControlPlaneStartError, componentFailure } from './control-plane-start-error.js'
import { writeControlPlaneState } from './control-plane-state.js'
import { findFreePort, isPortFree, pickControlPlanePorts } from './free-port.js'
import { cleanUpOnExit, forgetOnExit } from './exit-cleanup.js'
import { garbageCollectorCanary } from './garbage-collector-canary.js'
import type { ManagedProcess } from './managed-process.js'
import { retryOnPortConflict } from './retry-on-port-conflict.js'
import {
  ensureDefaultStorageClass,
  prepareVolumes,
  privateVolumesCommand,
  removeVolumes,
} from './host-path-storage.js'
import { installCrds } from './install-crds.js'
import type { CrdSource } from './install-crds.js'
import {
  ensureSimulatedNodes,
  kwokConfigYaml,
  simulatedNodesSchedulable,
} from './simulated-nodes.js'

/** A control plane whose processes this Node process started (see the module comment). */
export class LocalControlPlane implements ControlPlane {
  readonly dir: string
  readonly kubeconfigPath: string
  readonly isExisting = false
  readonly #removeDir: boolean
  readonly #binaries: ControlPlaneBinaries
  readonly #options: ControlPlaneOptions
  readonly #tokens: ControlPlaneTokens
  readonly #nodes: number
  readonly #nodeBinaries: NodeBinaries | undefined
  #nodeNames: readonly string[] = []
  #ports: ControlPlanePorts | undefined
  readonly #processes: ComponentProcesses
  #config: ClusterConfig | undefined
  #client: DynamicClient | undefined
  #transport: KubeTransport | undefined
  #stopped = false

  constructor(
    dir: string,
    removeDir: boolean,
    binaries: ControlPlaneBinaries,
    options: ControlPlaneOptions
  ) {
    this.dir = dir
    this.kubeconfigPath = join(dir, 'kubeconfig')
    this.#removeDir = removeDir
    this.#binaries = binaries
    this.#options = options
    this.#tokens = newControlPlaneTokens()
    this.#processes = new ComponentProcesses(join(dir, 'logs'), options.background === true)
    this.#nodes = options.nodes ?? 1
    if (!Number.isInteger(this.#nodes) || this.#nodes < 0 || this.#nodes > 256) {
      throw new RangeError(`nodes must be an integer from 0 to 256, got ${this.#nodes}`)
    }
    this.#nodeBinaries = nodeBinariesFor(binaries, this.#nodes, options.podNetwork !== undefined)
  }

  get nodeNames(): readonly string[] {
    return this.#nodeNames
  }

  get config(): ClusterConfig {
    if (this.#config === undefined) throw new Error('control plane is not started')
    return this.#config
  }

  get client(): DynamicClient {
    if (this.#client === undefined) throw new Error('control plane is not started')
    return this.#client
  }

  get etcdUrl(): string | undefined {
    return this.#ports === undefined ? undefined : `http://127.0.0.1:${this.#ports.etcd}`
  }

  #progress = (message: string): void => {
    this.#options.onProgress?.(message)
  }

  #path(...parts: string[]): string {
    return join(this.dir, ...parts)
  }

  // The API server's own self-signed certificate file holds its CA too, so it serves as the CA.
  #caPath(): string {
    return this.#options.podNetwork?.caFile ?? this.#path('pki', 'apiserver.crt')
  }

  #layout(): ControlPlaneLayout {
    if (this.#ports === undefined) throw new Error('ports are not allocated')
    return {
      dir: this.dir,
      kubeconfigPath: this.kubeconfigPath,
      ports: this.#ports,
      caPath: this.#caPath(),
      options: this.#options,
      defaultControllers: this.#hasStorage(),
    }
  }

  #prepareDir(): void {
    for (const sub of ['etcd', 'pki', 'kcm', 'scheduler', 'kwok', 'logs'])
      mkdirSync(this.#path(sub), { recursive: true })
    writeControlPlaneCredentials(this.#path('pki'), this.#tokens)
  }

  /** Starts every component in order and resolves when the whole plane is ready. */
  async start(): Promise<void> {
    this.#prepareDir()
    await this.#startEtcdAndApiServer()
    writeControlPlaneKubeconfig(
      this.kubeconfigPath,
      this.config.server,
      this.#caPath(),
      this.#tokens
    )
    if (this.#options.crds !== undefined && this.#options.crds.length > 0) {
      this.#progress(`installing ${this.#options.crds.length} CRD source(s)`)
      await this.installCrds(this.#options.crds)
    }
    if (this.#hasStorage()) {
      prepareVolumes(this.dir)
      await ensureDefaultStorageClass(this.client)
    }
    const timeoutMs = this.#startTimeoutMs()
    // The controller manager, scheduler and KWOK do not depend on each other: start them together.
    await Promise.all([
      this.#startControllerManager(timeoutMs),
      this.#nodeBinaries === undefined
        ? // Nodes of an earlier run on the same data would otherwise linger, stale but "Ready".
          ensureSimulatedNodes(this.client, 0)
        : this.#startNodes(this.#nodeBinaries, timeoutMs),
    ])
    this.#writeState()
  }

  #startTimeoutMs(): number {
    return this.#options.startTimeoutMs ?? 60_000
  }

  async #startEtcdAndApiServer(): Promise<void> {
    const fixedPort = this.#options.apiServerPort
    if (fixedPort !== undefined && !(await isPortFree(fixedPort))) {
      throw new ControlPlaneStartError(
        'kube-apiserver',
        `port ${fixedPort} on 127.0.0.1 is already in use; choose another port or leave it unset ` +
          'to use a free one'
      )
    }
    const timeoutMs = this.#startTimeoutMs()
    const pickPorts = async (): Promise<void> => {
      this.#ports = await pickControlPlanePorts(fixedPort)
    }
    await pickPorts()
    await retryOnPortConflict(
      async () => {
        await this.#startEtcd(timeoutMs)
        await this.#startApiServer(timeoutMs)
      },
      async () => {
        await this.#processes.stopAll()
        await pickPorts()
      },
      this.#progress
    )
  }

  async #startEtcd(timeoutMs: number): Promise<void> {
    const layout = this.#layout()
    const proc = this.#processes.spawn('etcd', this.#binaries.etcd, etcdFlags(layout))
    const clientUrl = `http://127.0.0.1:${layout.ports.etcd}`
    await awaitComponentReady(proc, timeoutMs, () => etcdHealthy(clientUrl), this.#progress)
  }

  async #startApiServer(timeoutMs: number): Promise<void> {
    const layout = this.#layout()
    const proc = this.#processes.spawn(
      'kube-apiserver',
      this.#binaries.kubeApiserver,
      apiServerFlags(layout)
    )
    let transport: KubeTransport | undefined
    const probe = async (): Promise<boolean> => {
      // The apiserver writes its self-signed serving certificate at startup; wait for it.
      if (transport === undefined) {
        if (!existsSync(layout.caPath)) return false
        await this.#transport?.close()
        this.#config = {
          server: `https://127.0.0.1:${layout.ports.apiServer}`,
          caPem: readFileSync(layout.caPath, 'utf8'),
          auth: { type: 'token', token: this.#tokens.admin },
          namespace: 'default',
          source: this.kubeconfigPath,
        }
        transport = new KubeTransport(this.#config, { timeoutMs: 5000 })
      }
      // Probe with credentials: anonymous /readyz may be 403 until RBAC bootstrap is done.
      return apiServerReady(transport)
    }
    await awaitComponentReady(proc, timeoutMs, probe, this.#progress)
    this.#transport = transport
    this.#client = transport === undefined ? undefined : new DynamicClient(transport)
  }

  // With storage and no caller's mount, it binds the volumes directory in a namespace of its own.
  #controllerManagerLaunch(args: string[]): { command: string; args: string[] } | undefined {
    if (!this.#hasStorage() || this.#options.volumesMount === 'caller') return undefined
    return privateVolumesCommand(this.dir, this.#binaries.kubeControllerManager, args)
  }

  // Storage comes with the default controllers (its provisioner is one of them).
  #hasStorage(): boolean {
    return this.#nodeBinaries !== undefined
  }

  async #startControllerManager(timeoutMs: number): Promise<void> {
    let proc: ManagedProcess | undefined
    await retryOnPortConflict(
      async () => {
        const layout = this.#layout()
        const args = controllerManagerFlags(layout)
        proc = this.#processes.spawn(
          'kube-controller-manager',
          this.#binaries.kubeControllerManager,
          args,
          undefined,
          this.#controllerManagerLaunch(args)
        )
        await awaitHealthz(proc, layout.ports.controllerManager, timeoutMs, this.#progress)
      },
      () => this.#repickPort('kube-controller-manager', 'controllerManager'),
      this.#progress
    )
    if (proc === undefined) return
    const started = Date.now()
    try {
      await garbageCollectorCanary(this.client, timeoutMs)
    } catch (error) {
      throw componentFailure(proc, 'did not garbage-collect a canary dependent', error)
    }
    this.#progress(
      `garbage collector working after ${((Date.now() - started) / 1000).toFixed(1)} s`
    )
  }

  async #startNodes(binaries: NodeBinaries, timeoutMs: number): Promise<void> {
    const startScheduler = (): Promise<void> =>
      retryOnPortConflict(
        async () => {
          const layout = this.#layout()
          const scheduler = this.#processes.spawn(
            'kube-scheduler',
            binaries.kubeScheduler,
            schedulerFlags(layout)
          )
          await awaitHealthz(scheduler, layout.ports.scheduler, timeoutMs, this.#progress)
        },
        () => this.#repickPort('kube-scheduler', 'scheduler'),
        this.#progress
      )
    const names = await ensureSimulatedNodes(this.client, this.#nodes)
    if (names.length === 0) {
      // A real node joins instead (podNetwork): it needs the scheduler, not KWOK.
      await startScheduler()
      return
    }
    const since = new Date()
    const configPath = this.#path('kwok', 'kwok.yaml')
    writeFileSync(configPath, kwokConfigYaml())
    const startKwok = (): Promise<void> =>
      retryOnPortConflict(
        async () => {
          const kwok = this.#processes.spawn(
            'kwok',
            binaries.kwok,
            kwokFlags(this.#layout(), configPath),
            // KWOK also reads ~/.kwok/kwok.yaml when it exists; a HOME of its own keeps a user's out.
            { HOME: this.#path('kwok') }
          )
          await awaitComponentReady(
            kwok,
            timeoutMs,
            () => simulatedNodesSchedulable(this.client, names, since),
            this.#progress
          )
        },
        () => this.#repickPort('kwok', 'kwok'),
        this.#progress
      )
    await Promise.all([startScheduler(), startKwok()])
    this.#nodeNames = names
    this.#progress(`${names.length} simulated node(s) Ready: ${names.join(', ')}`)
  }

  // Stops a component whose port was taken and gives it a new free port for its next start.
  async #repickPort(name: string, key: 'controllerManager' | 'scheduler' | 'kwok'): Promise<void> {
    await this.#processes.stopOne(name)
    // The port first: the scheduler and KWOK may repick at once, and each keeps the other's.
    const port = await findFreePort()
    this.#ports = { ...this.#layout().ports, [key]: port }
  }

  #writeState(): void {
    const layout = this.#layout()
    writeControlPlaneState(this.dir, {
      kubernetesVersion: KUBERNETES_VERSION,
      kubeconfig: this.kubeconfigPath,
      server: this.config.server,
      etcdUrl: `http://127.0.0.1:${layout.ports.etcd}`,
      nodes: this.#nodeNames.length,
      startedAt: new Date().toISOString(),
      processes: this.#processes.records(),
    })
  }

  async installCrds(crds: readonly CrdSource[]): Promise<void> {
    await installCrds(this.client, crds)
  }

  async restartApiServer(): Promise<void> {
    await this.#processes.stopOne('kube-apiserver')
    const flags = apiServerFlags(this.#layout())
    const proc = this.#processes.spawn('kube-apiserver', this.#binaries.kubeApiserver, flags)
    const transport = this.#transport
    await awaitComponentReady(
      proc,
      this.#startTimeoutMs(),
      async () => transport !== undefined && (await apiServerReady(transport)),
      this.#progress
    )
    this.#writeState()
  }

  async release(): Promise<void> {
    forgetOnExit(this)
    await this.#transport?.close()
  }

  /** Kills every process at once (synchronous: for process exit). */
  killNow(): void {
    this.#processes.killNow()
  }

  async stop(): Promise<void> {
    if (this.#stopped) return
    this.#stopped = true
    forgetOnExit(this)
    await this.#transport?.close()
    await this.#processes.stopAll()
    // A real node's teardown removes them once its namespaces are gone.
    if (this.#hasStorage() && this.#options.volumesMount !== 'caller') removeVolumes(this.dir)
    if (this.#removeDir) rmSync(this.dir, { recursive: true, force: true })
  }

  /** Registers this control plane for exit and signal cleanup. */
  track(): void {
    if (this.#options.background === true) return
    cleanUpOnExit(this)
  }
}
