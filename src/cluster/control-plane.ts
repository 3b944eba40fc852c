/**
 * A real local Kubernetes control plane for tests and demos: etcd, kube-apiserver,
 * kube-controller-manager and, with nodes, kube-scheduler and KWOK simulating the nodes' kubelets.
 *
 * @remarks
 * **Guarantees**
 * - Everything listens on 127.0.0.1 only, on free ports, with RBAC on and a generated admin token.
 * - `startControlPlane` resolves only when etcd is healthy, kube-apiserver answers `/readyz`, the
 *   given CRDs are Established, the garbage collector has collected a canary object and, with
 *   nodes, kube-scheduler answers `/healthz` and every simulated node is Ready and untainted.
 * - A failure names the component and shows the tail of its log.
 * - `stop()` ends every process it started; so do SIGINT, SIGTERM and process exit.
 *
 * **Caveats** With `nodes: 0` there is no scheduler and no kubelet: Pods are stored and stay
 * `Pending`, and only the garbage collector and namespace controllers run. With nodes, Pods are
 * scheduled and their status is simulated, but no container really runs (see simulated-nodes.ts).
 *
 * @module
 */
import { randomBytes, generateKeyPairSync } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Agent, request } from 'undici'
import { stringify } from 'yaml'
import type { ClusterConfig } from '../kube/cluster-config.js'
import { DynamicClient } from '../kube/dynamic-client.js'
import { KubeTransport } from '../kube/kube-transport.js'
import { NotFoundError } from '../kube/api-error.js'
import { loadClusterConfig } from '../kube/load-cluster-config.js'
import {
  findControlPlaneBinaries,
  KUBERNETES_VERSION,
  requireNodeBinaries,
  requireScheduler,
} from './control-plane-binaries.js'
import type { ControlPlaneBinaries, NodeBinaries } from './control-plane-binaries.js'
import { findFreePort, isPortFree } from './free-port.js'
import { auditLogFlags, featureGateFlags } from './api-server-options.js'
import type { FeatureGates } from './api-server-options.js'
import { installCrds } from './install-crds.js'
import type { CrdSource } from './install-crds.js'
import { logTail, ManagedProcess } from './managed-process.js'
import { writeControlPlaneState } from './control-plane-state.js'
import {
  ensureDefaultStorageClass,
  prepareVolumes,
  privateVolumesCommand,
  removeVolumes,
} from './host-path-storage.js'
import { waitFor } from '../runtime/clock/wait-for.js'
import { CONFIGMAPS } from '../kube/well-known-resources.js'
import {
  ensureSimulatedNodes,
  kwokConfigYaml,
  NODE_LEASE_SECONDS,
  SIMULATED_NODE_ANNOTATION,
  simulatedNodesSchedulable,
} from './simulated-nodes.js'

/** Options of {@link startControlPlane}. */
export interface ControlPlaneOptions {
  /** Working directory for data, certificates, logs and the kubeconfig; a temp dir when absent. */
  readonly dir?: string
  /** CRDs to install (YAML file paths or objects) before the controller manager starts. */
  readonly crds?: readonly CrdSource[]
  /**
   * Uses the cluster in `$KUBECONFIG` (context `$METACTL_CONTEXT`, else the current one) instead
   * of starting one. Defaults to
   * `METACTL_USE_EXISTING_CLUSTER=1` in the environment.
   */
  readonly useExistingCluster?: boolean
  /** Binaries to run; found with {@link findControlPlaneBinaries} when absent. */
  readonly binaries?: ControlPlaneBinaries
  /** Time each component gets to become ready (60 s). */
  readonly startTimeoutMs?: number
  /** Leaves the processes running after this Node process exits (for `metactl cluster up`). */
  readonly background?: boolean
  /** Fixed kube-apiserver port; a free one when absent. Refused with a clear error if taken. */
  readonly apiServerPort?: number
  /** Extra kube-apiserver flags, appended last so they override ours. */
  readonly apiServerFlags?: readonly string[]
  /** kube-apiserver feature gates, e.g. `{ ShardedListAndWatch: true }`. */
  readonly featureGates?: FeatureGates
  /** Writes kube-apiserver's audit log of writes here (JSON lines; see `AUDIT_POLICY`). */
  readonly auditLogPath?: string
  /** Receives one line per startup step. */
  readonly onProgress?: (message: string) => void
  /**
   * Simulated nodes to register (default 1, at most 256). With one or more, kube-scheduler and
   * KWOK run and kube-controller-manager runs its default controllers (Deployments, Jobs,
   * StatefulSets, EndpointSlices, service accounts, …), so Pods are scheduled and become Running
   * and Ready. `0` gives the smaller plane: no scheduler, Pods stay `Pending`, and only the
   * garbage collector and namespace controllers run.
   */
  readonly nodes?: number
  /**
   * Makes the API server reachable from real nodes and their Pods (a real node's cluster, which
   * runs this plane inside its own network namespace). Absent: everything stays on 127.0.0.1.
   */
  readonly podNetwork?: PodNetworkOptions
  /**
   * Who binds the cluster's volumes directory over the host-path provisioner's path (see
   * host-path-storage.ts): `own-mount-namespace` (default) runs kube-controller-manager in a mount
   * namespace of its own that does it; `caller` means the caller's mount namespace already has it
   * (a real node's, shared with the kubelet that mounts the volumes into Pods).
   */
  readonly volumesMount?: 'own-mount-namespace' | 'caller'
}

/**
 * How a control plane serves real nodes and Pods. With it the API server binds every address of
 * its network namespace, advertises `advertiseAddress` behind the `kubernetes` Service, serves
 * the given certificate, and admits Pods with service-account tokens; kube-scheduler and the
 * default controllers run even with `nodes: 0`, because a real node joins.
 */
export interface PodNetworkOptions {
  /** An address Pods can route to (the node's address inside the network namespace). */
  readonly advertiseAddress: string
  /** Serving certificate (PEM) valid for 127.0.0.1, `advertiseAddress` and the Service IP. */
  readonly tlsCertFile: string
  /** Its private key (PEM). */
  readonly tlsKeyFile: string
  /** The CA (PEM) that signed it: trusted by the kubeconfig and published to Pods. */
  readonly caFile: string
}

/** A running (or attached) control plane. */
export interface ControlPlane {
  /** Path of a kubeconfig with admin credentials, usable by kubectl and by our client. */
  readonly kubeconfigPath: string
  /** Working directory (empty for an existing cluster). */
  readonly dir: string
  /** The parsed connection settings. */
  readonly config: ClusterConfig
  /** A client connected as the admin user. */
  readonly client: DynamicClient
  /** True when this is an existing cluster from `$KUBECONFIG`, not one we started. */
  readonly isExisting: boolean
  /** Names of the simulated nodes this control plane registered (empty for an existing cluster). */
  readonly nodeNames: readonly string[]
  /** etcd client URL (only for a control plane we started). */
  readonly etcdUrl: string | undefined
  /** Installs more CRDs and waits until they are Established. */
  installCrds(crds: readonly CrdSource[]): Promise<void>
  /** Stops and starts kube-apiserver on the same port and data, e.g. to test watch recovery. */
  restartApiServer(): Promise<void>
  /** Stops every process this control plane started and removes a temporary working dir. */
  stop(): Promise<void>
  /** Closes this handle's connections but leaves the processes running (background mode). */
  release(): Promise<void>
}

/** User name of the second, unprivileged identity in the generated kubeconfig. */
export const UNPRIVILEGED_USER = 'metactl-user'
/** Kubeconfig context of {@link UNPRIVILEGED_USER} (in group `metactl:users`, no RBAC grants). */
export const UNPRIVILEGED_CONTEXT = 'metactl-user'

const running = new Set<LocalControlPlane>()
let hooksInstalled = false

function installExitHooks(): void {
  if (hooksInstalled) return
  hooksInstalled = true
  process.once('exit', () => {
    for (const plane of running) plane.killNow()
  })
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void Promise.allSettled([...running].map((plane) => plane.stop())).then(() => {
        process.exit(signal === 'SIGINT' ? 130 : 143)
      })
    })
  }
}

/** Raised when a component does not become ready; the message carries its log tail. */
export class ControlPlaneStartError extends Error {
  override readonly name = 'ControlPlaneStartError'
  /** The component that failed: `etcd`, `kube-apiserver` or `kube-controller-manager`. */
  readonly component: string
  constructor(component: string, message: string, options?: ErrorOptions) {
    super(message, options)
    this.component = component
  }
}

interface Ports {
  readonly etcd: number
  readonly etcdPeer: number
  readonly apiServer: number
  readonly controllerManager: number
  readonly scheduler: number
  readonly kwok: number
}

class LocalControlPlane implements ControlPlane {
  readonly dir: string
  readonly kubeconfigPath: string
  readonly isExisting = false
  readonly #removeDir: boolean
  readonly #binaries: ControlPlaneBinaries
  readonly #options: ControlPlaneOptions
  readonly #token: string
  readonly #userToken: string
  readonly #nodes: number
  readonly #nodeBinaries: NodeBinaries | undefined
  #nodeNames: readonly string[] = []
  #ports: Ports | undefined
  #processes: ManagedProcess[] = []
  #config: ClusterConfig | undefined
  #client: DynamicClient | undefined
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
    this.#token = randomBytes(24).toString('hex')
    this.#userToken = randomBytes(24).toString('hex')
    this.#nodes = options.nodes ?? 1
    if (!Number.isInteger(this.#nodes) || this.#nodes < 0 || this.#nodes > 256) {
      throw new RangeError(`nodes must be an integer from 0 to 256, got ${this.#nodes}`)
    }
    // Checked before anything starts, so a missing binary fails fast with the command to run.
    this.#nodeBinaries =
      this.#nodes > 0
        ? requireNodeBinaries(binaries)
        : options.podNetwork === undefined
          ? undefined
          : // A real node joins: the scheduler is needed, KWOK is not (it never starts).
            { kubeScheduler: requireScheduler(binaries), kwok: '' }
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

  #progress(message: string): void {
    this.#options.onProgress?.(message)
  }

  #path(...parts: string[]): string {
    return join(this.dir, ...parts)
  }

  // The API server's own self-signed certificate file holds its CA too, so it serves as the CA.
  #caPath(): string {
    return this.#options.podNetwork?.caFile ?? this.#path('pki', 'apiserver.crt')
  }

  #prepareDir(): void {
    for (const sub of ['etcd', 'pki', 'kcm', 'scheduler', 'kwok', 'logs'])
      mkdirSync(this.#path(sub), { recursive: true })
    const pki = this.#path('pki')
    // system:masters is bound to cluster-admin by RBAC bootstrap, so the admin token can do
    // anything; the second user has no permissions until a test grants them (RBAC, APF tests).
    writeFileSync(
      join(pki, 'tokens.csv'),
      `${this.#token},admin,admin-uid,system:masters\n` +
        `${this.#userToken},${UNPRIVILEGED_USER},${UNPRIVILEGED_USER}-uid,metactl:users\n`,
      { mode: 0o600 }
    )
    if (!existsSync(join(pki, 'sa.key'))) {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', {
        modulusLength: 2048,
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        publicKeyEncoding: { type: 'spki', format: 'pem' },
      })
      writeFileSync(join(pki, 'sa.key'), privateKey, { mode: 0o600 })
      writeFileSync(join(pki, 'sa.pub'), publicKey, { mode: 0o600 })
    }
  }

  async start(): Promise<void> {
    this.#prepareDir()
    const fixedPort = this.#options.apiServerPort
    if (fixedPort !== undefined && !(await isPortFree(fixedPort))) {
      throw new ControlPlaneStartError(
        'kube-apiserver',
        `port ${fixedPort} on 127.0.0.1 is already in use; choose another port or leave it unset ` +
          'to use a free one'
      )
    }
    const timeoutMs = this.#options.startTimeoutMs ?? 60_000
    // A free port can be taken between probing and binding; a fresh set of ports fixes that.
    for (let attempt = 1; ; attempt++) {
      this.#ports = {
        etcd: await findFreePort(),
        etcdPeer: await findFreePort(),
        apiServer: this.#options.apiServerPort ?? (await findFreePort()),
        controllerManager: await findFreePort(),
        scheduler: await findFreePort(),
        kwok: await findFreePort(),
      }
      try {
        await this.#startEtcd(timeoutMs)
        await this.#startApiServer(timeoutMs)
        break
      } catch (error) {
        await this.#stopProcesses()
        const inUse =
          error instanceof ControlPlaneStartError &&
          error.message.includes('address already in use')
        if (!inUse || attempt >= 3 || fixedPort !== undefined) throw error
        this.#progress('a port was taken; retrying with new ports')
      }
    }
    this.#writeKubeconfig()
    if (this.#options.crds !== undefined && this.#options.crds.length > 0) {
      this.#progress(`installing ${this.#options.crds.length} CRD source(s)`)
      await this.installCrds(this.#options.crds)
    }
    if (this.#hasStorage()) {
      prepareVolumes(this.dir)
      await ensureDefaultStorageClass(this.client)
    }
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

  #spawn(
    name: string,
    command: string,
    args: string[],
    env?: Readonly<Record<string, string>>,
    launch?: { command: string; args: string[] }
  ): ManagedProcess {
    const proc = ManagedProcess.start(
      {
        name,
        command,
        args,
        logFile: this.#path('logs', `${name}.log`),
        ...(env === undefined ? {} : { env }),
        ...(launch === undefined ? {} : { launch }),
      },
      this.#options.background === true
    )
    this.#processes.push(proc)
    return proc
  }

  #failure(proc: ManagedProcess, what: string, cause?: unknown): ControlPlaneStartError {
    const status = proc.exitStatus === undefined ? '' : ` (process ended: ${proc.exitStatus})`
    return new ControlPlaneStartError(
      proc.spec.name,
      `${proc.spec.name} ${what}${status}. Last lines of ${proc.spec.logFile}:\n${logTail(proc.spec.logFile)}`,
      { cause }
    )
  }

  async #awaitReady(
    proc: ManagedProcess,
    timeoutMs: number,
    probe: () => Promise<boolean>
  ): Promise<void> {
    const started = Date.now()
    let lastError: unknown
    for (;;) {
      // A component that exited will never become ready: fail at once with its log.
      if (proc.exitStatus !== undefined)
        throw this.#failure(proc, 'exited during startup', lastError)
      try {
        if (await probe()) break
      } catch (error) {
        lastError = error
      }
      if (Date.now() - started > timeoutMs) {
        throw this.#failure(proc, `was not ready after ${timeoutMs} ms`, lastError)
      }
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    this.#progress(`${proc.spec.name} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  }

  async #startEtcd(timeoutMs: number): Promise<void> {
    const ports = this.#requirePorts()
    const client = `http://127.0.0.1:${ports.etcd}`
    const peer = `http://127.0.0.1:${ports.etcdPeer}`
    const proc = this.#spawn('etcd', this.#binaries.etcd, [
      '--name=metactl',
      `--data-dir=${this.#path('etcd')}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=metactl=${peer}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ])
    await this.#awaitReady(proc, timeoutMs, async () => {
      const res = await request(`${client}/health`, { headersTimeout: 2000, bodyTimeout: 2000 })
      const body = await res.body.text()
      return res.statusCode === 200 && body.includes('"health":"true"')
    })
  }

  #apiServerArgs(): string[] {
    const ports = this.#requirePorts()
    const pki = this.#path('pki')
    return [
      `--etcd-servers=http://127.0.0.1:${ports.etcd}`,
      `--secure-port=${ports.apiServer}`,
      ...this.#apiServerNetworkArgs(),
      `--cert-dir=${pki}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--authorization-mode=RBAC',
      `--token-auth-file=${join(pki, 'tokens.csv')}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${join(pki, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
      '--allow-privileged=true',
      '--profiling=false',
      ...featureGateFlags(this.#options.featureGates),
      ...auditLogFlags(this.#options.auditLogPath, pki),
      ...(this.#options.apiServerFlags ?? []),
    ]
  }

  #apiServerNetworkArgs(): string[] {
    const network = this.#options.podNetwork
    if (network !== undefined) {
      return [
        '--bind-address=0.0.0.0',
        `--advertise-address=${network.advertiseAddress}`,
        `--tls-cert-file=${network.tlsCertFile}`,
        `--tls-private-key-file=${network.tlsKeyFile}`,
        // The node's name resolves nowhere in the namespace (no DNS); its address does.
        '--kubelet-preferred-address-types=InternalIP',
      ]
    }
    return [
      '--bind-address=127.0.0.1',
      // Required on machines without a default route, where the apiserver cannot pick an address.
      '--advertise-address=127.0.0.1',
      // A loopback address cannot be stored in the `kubernetes` Endpoints object.
      '--endpoint-reconciler-type=none',
      // Without nodes no service-account controller runs, and with them a Pod created right after
      // its namespace would be refused until the `default` ServiceAccount exists. Pods of a real
      // node get their tokens (podNetwork), and its start waits for that ServiceAccount.
      '--disable-admission-plugins=ServiceAccount',
    ]
  }

  async #startApiServer(timeoutMs: number): Promise<void> {
    const ports = this.#requirePorts()
    const proc = this.#spawn('kube-apiserver', this.#binaries.kubeApiserver, this.#apiServerArgs())
    const caPath = this.#caPath()
    let transport: KubeTransport | undefined
    await this.#awaitReady(proc, timeoutMs, async () => {
      // The apiserver writes its self-signed serving certificate at startup; wait for it.
      if (transport === undefined) {
        if (!existsSync(caPath)) return false
        await this.#transport?.close()
        this.#config = {
          server: `https://127.0.0.1:${ports.apiServer}`,
          caPem: readFileSync(caPath, 'utf8'),
          auth: { type: 'token', token: this.#token },
          namespace: 'default',
          source: this.kubeconfigPath,
        }
        transport = new KubeTransport(this.#config, { timeoutMs: 5000 })
      }
      // Probe with credentials: anonymous /readyz may be 403 until RBAC bootstrap is done.
      const body = await transport.requestText({
        method: 'GET',
        path: '/readyz',
        accept: 'text/plain',
      })
      return body.trim() === 'ok'
    })
    this.#transport = transport
    this.#client = transport === undefined ? undefined : new DynamicClient(transport)
  }

  #transport: KubeTransport | undefined

  #controllerManagerArgs(): string[] {
    const ports = this.#requirePorts()
    const pki = this.#path('pki')
    const controllers =
      this.#nodeBinaries !== undefined
        ? // The default set; the token controller signs service-account tokens with our key.
          [
            '--controllers=*',
            `--service-account-private-key-file=${join(pki, 'sa.key')}`,
            `--root-ca-file=${this.#caPath()}`,
            // The default StorageClass's provisioner (host-path-storage.ts).
            '--enable-hostpath-provisioner',
          ]
        : ['--controllers=garbage-collector-controller,namespace-controller']
    return [
      `--kubeconfig=${this.kubeconfigPath}`,
      `--authentication-kubeconfig=${this.kubeconfigPath}`,
      `--authorization-kubeconfig=${this.kubeconfigPath}`,
      ...controllers,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${ports.controllerManager}`,
      `--cert-dir=${this.#path('kcm')}`,
      '--kube-api-qps=100',
      '--kube-api-burst=200',
    ]
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
    const ports = this.#requirePorts()
    const args = this.#controllerManagerArgs()
    const proc = this.#spawn(
      'kube-controller-manager',
      this.#binaries.kubeControllerManager,
      args,
      undefined,
      this.#controllerManagerLaunch(args)
    )
    await this.#awaitHealthz(proc, ports.controllerManager, timeoutMs)
    await this.#garbageCollectorCanary(proc, timeoutMs)
  }

  // The controller manager and the scheduler serve /healthz over TLS with a self-signed certificate.
  async #awaitHealthz(proc: ManagedProcess, port: number, timeoutMs: number): Promise<void> {
    const agent = new Agent({ connect: { rejectUnauthorized: false } })
    try {
      await this.#awaitReady(proc, timeoutMs, async () => {
        const res = await request(`https://127.0.0.1:${port}/healthz`, {
          dispatcher: agent,
          headersTimeout: 2000,
          bodyTimeout: 2000,
        })
        await res.body.text()
        return res.statusCode === 200
      })
    } finally {
      await agent.close()
    }
  }

  async #startNodes(binaries: NodeBinaries, timeoutMs: number): Promise<void> {
    const ports = this.#requirePorts()
    const scheduler = this.#spawn('kube-scheduler', binaries.kubeScheduler, [
      `--kubeconfig=${this.kubeconfigPath}`,
      `--authentication-kubeconfig=${this.kubeconfigPath}`,
      `--authorization-kubeconfig=${this.kubeconfigPath}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${ports.scheduler}`,
      `--cert-dir=${this.#path('scheduler')}`,
    ])
    const names = await ensureSimulatedNodes(this.client, this.#nodes)
    if (names.length === 0) {
      // A real node joins instead (podNetwork): it needs the scheduler, not KWOK.
      await this.#awaitHealthz(scheduler, ports.scheduler, timeoutMs)
      return
    }
    const since = new Date()
    const configPath = this.#path('kwok', 'kwok.yaml')
    writeFileSync(configPath, kwokConfigYaml())
    const kwok = this.#spawn(
      'kwok',
      binaries.kwok,
      [
        `--kubeconfig=${this.kubeconfigPath}`,
        `--config=${configPath}`,
        `--manage-nodes-with-annotation-selector=${SIMULATED_NODE_ANNOTATION}=fake`,
        `--node-lease-duration-seconds=${NODE_LEASE_SECONDS}`,
        `--server-address=127.0.0.1:${ports.kwok}`,
      ],
      // KWOK also reads ~/.kwok/kwok.yaml when it exists; a HOME of its own keeps a user's out.
      { HOME: this.#path('kwok') }
    )
    await Promise.all([
      this.#awaitHealthz(scheduler, ports.scheduler, timeoutMs),
      this.#awaitReady(kwok, timeoutMs, () => simulatedNodesSchedulable(this.client, names, since)),
    ])
    this.#nodeNames = names
    this.#progress(`${names.length} simulated node(s) Ready: ${names.join(', ')}`)
  }

  // /healthz says the process is up, not that the garbage collector has synced its informers;
  // a dependent that is actually collected is the only proof.
  async #garbageCollectorCanary(proc: ManagedProcess, timeoutMs: number): Promise<void> {
    const started = Date.now()
    const name = `metactl-gc-canary-${randomBytes(4).toString('hex')}`
    const owner = await this.client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `${name}-owner`, namespace: 'default' },
    })
    await this.client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: `${name}-child`,
        namespace: 'default',
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            name: `${name}-owner`,
            uid: owner.metadata.uid ?? '',
          },
        ],
      },
    })
    await this.client.delete(CONFIGMAPS, `${name}-owner`, { namespace: 'default' })
    try {
      await waitFor(
        async () => {
          try {
            await this.client.get(CONFIGMAPS, `${name}-child`, { namespace: 'default' })
            return false
          } catch (error) {
            if (error instanceof NotFoundError) return true
            throw error
          }
        },
        {
          timeoutMs,
          intervalMs: 250,
          description: 'the garbage collector to delete a canary dependent',
        }
      )
    } catch (error) {
      throw this.#failure(proc, 'did not garbage-collect a canary dependent', error)
    }
    this.#progress(
      `garbage collector working after ${((Date.now() - started) / 1000).toFixed(1)} s`
    )
  }

  #requirePorts(): Ports {
    if (this.#ports === undefined) throw new Error('ports are not allocated')
    return this.#ports
  }

  #writeKubeconfig(): void {
    const config = this.config
    const kubeconfig = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'metactl-local',
          cluster: {
            server: config.server,
            'certificate-authority': this.#caPath(),
          },
        },
      ],
      users: [
        { name: 'metactl-admin', user: { token: this.#token } },
        { name: UNPRIVILEGED_USER, user: { token: this.#userToken } },
      ],
      contexts: [
        {
          name: 'metactl-local',
          context: { cluster: 'metactl-local', user: 'metactl-admin', namespace: 'default' },
        },
        {
          name: UNPRIVILEGED_CONTEXT,
          context: { cluster: 'metactl-local', user: UNPRIVILEGED_USER, namespace: 'default' },
        },
      ],
      'current-context': 'metactl-local',
      preferences: {},
    }
    writeFileSync(this.kubeconfigPath, stringify(kubeconfig), { mode: 0o600 })
  }

  #writeState(): void {
    const ports = this.#requirePorts()
    writeControlPlaneState(this.dir, {
      kubernetesVersion: KUBERNETES_VERSION,
      kubeconfig: this.kubeconfigPath,
      server: this.config.server,
      etcdUrl: `http://127.0.0.1:${ports.etcd}`,
      nodes: this.#nodeNames.length,
      startedAt: new Date().toISOString(),
      processes: this.#processes.map((p) => ({
        name: p.spec.name,
        pid: p.pid,
        command: p.spec.command,
      })),
    })
  }

  async installCrds(crds: readonly CrdSource[]): Promise<void> {
    await installCrds(this.client, crds)
  }

  async restartApiServer(): Promise<void> {
    const index = this.#processes.findIndex((p) => p.spec.name === 'kube-apiserver')
    const old = this.#processes[index]
    if (old === undefined) throw new Error('kube-apiserver is not running')
    await old.stop()
    this.#processes.splice(index, 1)
    const proc = this.#spawn('kube-apiserver', this.#binaries.kubeApiserver, this.#apiServerArgs())
    await this.#awaitReady(proc, this.#options.startTimeoutMs ?? 60_000, async () => {
      const body = await this.#transport?.requestText({
        method: 'GET',
        path: '/readyz',
        accept: 'text/plain',
      })
      return body?.trim() === 'ok'
    })
    this.#writeState()
  }

  async #stopProcesses(): Promise<void> {
    // Reverse order: the controller manager first, etcd last, so no component loses its backend.
    for (const proc of [...this.#processes].reverse()) await proc.stop()
    this.#processes = []
  }

  async release(): Promise<void> {
    running.delete(this)
    await this.#transport?.close()
  }

  killNow(): void {
    for (const proc of this.#processes) proc.killNow()
  }

  async stop(): Promise<void> {
    if (this.#stopped) return
    this.#stopped = true
    running.delete(this)
    await this.#transport?.close()
    await this.#stopProcesses()
    // A real node's teardown removes them once its namespaces are gone.
    if (this.#hasStorage() && this.#options.volumesMount !== 'caller') removeVolumes(this.dir)
    if (this.#removeDir) rmSync(this.dir, { recursive: true, force: true })
  }

  /** Registers this control plane for exit and signal cleanup. */
  track(): void {
    if (this.#options.background === true) return
    installExitHooks()
    running.add(this)
  }
}

class ExistingControlPlane implements ControlPlane {
  readonly dir = ''
  readonly isExisting = true
  readonly etcdUrl = undefined
  readonly nodeNames: readonly string[] = []
  readonly kubeconfigPath: string
  readonly config: ClusterConfig
  readonly client: DynamicClient
  readonly #transport: KubeTransport

  constructor(kubeconfigPath: string, config: ClusterConfig) {
    this.kubeconfigPath = kubeconfigPath
    this.config = config
    this.#transport = new KubeTransport(config)
    this.client = new DynamicClient(this.#transport)
  }

  async installCrds(crds: readonly CrdSource[]): Promise<void> {
    await installCrds(this.client, crds)
  }

  restartApiServer(): Promise<void> {
    return Promise.reject(new Error('cannot restart the API server of an existing cluster'))
  }

  async stop(): Promise<void> {
    await this.#transport.close()
  }

  release(): Promise<void> {
    return this.stop()
  }
}

/**
 * Starts a local control plane, or attaches to the cluster in `$KUBECONFIG` when
 * `useExistingCluster` (or `METACTL_USE_EXISTING_CLUSTER=1`) says so.
 *
 * @throws {@link MissingBinariesError} when the binaries are not built.
 * @throws {@link ControlPlaneStartError} when a component does not become ready.
 *
 * @example
 * ```ts
 * const plane = await startControlPlane({ crds: ['deploy/crds.yaml'] })
 * try {
 *   await plane.client.list({ group: '', version: 'v1', resource: 'namespaces', namespaced: false })
 * } finally {
 *   await plane.stop()
 * }
 * ```
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const useExisting =
    options.useExistingCluster ?? process.env['METACTL_USE_EXISTING_CLUSTER'] === '1'
  if (useExisting) {
    // $KUBECONFIG may list several files; the loader merges them as kubectl does.
    // METACTL_CONTEXT picks another context than the current one (kind, k3d, a real cluster).
    const config = await loadClusterConfig({ context: process.env['METACTL_CONTEXT'] })
    const plane = new ExistingControlPlane(process.env['KUBECONFIG'] ?? config.source, config)
    if (options.crds !== undefined && options.crds.length > 0) await plane.installCrds(options.crds)
    return plane
  }
  const binaries = options.binaries ?? findControlPlaneBinaries()
  const dir =
    options.dir === undefined ? mkdtempSync(join(tmpdir(), 'metactl-cp-')) : resolve(options.dir)
  mkdirSync(dir, { recursive: true })
  const plane = new LocalControlPlane(dir, options.dir === undefined, binaries, options)
  plane.track()
  try {
    await plane.start()
  } catch (error) {
    await plane.stop()
    throw error
  }
  return plane
}
