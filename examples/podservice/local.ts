/**
 * What `make demo` and `make run` share: the step printer, the setup (control plane, CRDs, hook
 * webhook and engine, sample.yaml) and the parent → children tree.
 *
 * @module
 */
import { relative } from 'node:path'
import type { KubeObject } from 'metacontroller-ts'
import type { DynamicClient } from 'metacontroller-ts/kube'
import { InvalidError, readWatchEvents } from 'metacontroller-ts/kube'
import { createLogger } from 'metacontroller-ts/runtime'
import { startControlPlane, waitFor } from 'metacontroller-ts/testing'
import type { ControlPlane } from 'metacontroller-ts/testing'
import type { Ingress, Pod, PodService, Service } from './hook.js'
import {
  INGRESSES,
  MANIFESTS,
  NAMESPACES,
  PODS,
  PODSERVICES,
  SERVICES,
  createOrReplace,
  loadSample,
  metacontrollerCrdFiles,
  startPodServiceStack,
} from './stack.js'
import type { PodServiceStack } from './stack.js'

/** Prints numbered step headings, each step's lines, and how long it took. */
export class Steps {
  readonly #total: number
  readonly #write: (text: string) => void
  #index = 0
  #started = Date.now()
  readonly #begun = Date.now()

  constructor(total: number, write: (text: string) => void = (t) => process.stdout.write(t)) {
    this.#total = total
    this.#write = write
  }

  /** Starts the next step. */
  start(title: string): void {
    this.#index++
    this.#started = Date.now()
    this.#write(`\n==> ${this.#index}/${this.#total} ${title}\n`)
  }

  /** Prints a line of the current step. */
  line(text = ''): void {
    this.#write(text === '' ? '\n' : `    ${text}\n`)
  }

  /** Ends the current step with its duration. */
  done(): void {
    this.#write(`    (${seconds(Date.now() - this.#started)})\n`)
  }

  /** Time since the first step. */
  get elapsed(): string {
    return seconds(Date.now() - this.#begun)
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`
}

/** A repository-relative path, for messages. */
export function shown(path: string): string {
  return relative(process.cwd(), path) || path
}

/** The first characters of a UID, enough to tell two objects apart. */
export function shortUid(object: KubeObject): string {
  return (object.metadata.uid ?? '?').slice(0, 8)
}

/** The API server's own message in an error, without our request prefix. */
export function serverMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  const match = /: \d{3} [A-Za-z]+: ([\s\S]*)$/.exec(text)
  return match?.[1] ?? text
}

/** Tells whether an error is the API server refusing an object (422 Invalid). */
export function isInvalid(error: unknown): error is InvalidError {
  return error instanceof InvalidError
}

/** The running demo world: the control plane, the engine and the hook. */
export interface LocalPodService {
  readonly plane: ControlPlane
  readonly stack: PodServiceStack
  readonly namespace: string
  /** Stops the engine and the hook, then the control plane; never throws. */
  stop(): Promise<void>
}

/**
 * Runs the three setup steps: control plane with the CRDs, hook + engine + CompositeController,
 * and sample.yaml (waiting for the Pod, the Service and the status).
 */
export async function setUpLocalPodService(
  steps: Steps,
  options: { readonly useExistingCluster?: boolean } = {}
): Promise<LocalPodService> {
  let plane: ControlPlane | undefined
  let stack: PodServiceStack | undefined
  const stop = async (): Promise<void> => {
    await stack?.stop().catch((error: unknown) => {
      process.stderr.write(`could not stop the engine cleanly: ${serverMessage(error)}\n`)
    })
    await plane?.stop().catch((error: unknown) => {
      process.stderr.write(`could not stop the control plane cleanly: ${serverMessage(error)}\n`)
    })
  }
  try {
    const existing =
      options.useExistingCluster ?? process.env['METACTL_USE_EXISTING_CLUSTER'] === '1'
    // Installed before kube-controller-manager starts, so that its garbage collector knows
    // PodServices from the start (it rediscovers new kinds only every 30 s or so).
    const crds = [...metacontrollerCrdFiles(), MANIFESTS.crd]
    steps.start(
      existing
        ? 'Attach to the cluster in $KUBECONFIG (METACTL_USE_EXISTING_CLUSTER=1) and install the CRDs'
        : 'Start a local cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, ' +
            'a simulated node) on 127.0.0.1, with the CRDs'
    )
    plane = await startControlPlane({
      useExistingCluster: existing,
      crds,
      onProgress: (message) => {
        steps.line(message)
      },
    })
    for (const file of crds) steps.line(`CRD ${shown(file)}: established`)
    steps.line(`API server ${plane.config.server}`)
    steps.line(`kubeconfig ${plane.kubeconfigPath}`)
    steps.done()

    steps.start('Start the hook as a webhook and the engine, and create the CompositeController')
    stack = await startPodServiceStack(plane.config, plane.client, 'webhook', {
      log: createLogger({ level: 'error', format: 'text' }),
    })
    steps.line(`hook:   serveHooks on ${stack.hookUrl ?? '?'} (examples/podservice/hook.ts)`)
    steps.line('engine: in this process, watching CompositeControllers')
    steps.line(
      `CompositeController podservice-controller from ${shown(MANIFESTS.controller)}, ` +
        'its url rewritten to the hook above'
    )
    steps.done()

    steps.start(`Apply ${shown(MANIFESTS.sample)}`)
    const sample = loadSample()
    const namespace = sample.namespace.metadata.name ?? ''
    await createOrReplace(plane.client, NAMESPACES, sample.namespace)
    steps.line(`namespace/${namespace} created`)
    await createOrReplace(plane.client, PODSERVICES, sample.podService)
    steps.line(`podservice.homelabz.com.br/${sample.podService.metadata.name ?? ''} created`)
    // With nodes the Pod runs, so the demo waits for Ready True; without, the address suffices.
    const hasNodes = plane.nodeNames.length > 0
    steps.line(
      'waiting for the engine to create the Pod and the Service and write the status' +
        (hasNodes ? ', and for the Pod to be scheduled and become Ready...' : '...')
    )
    const client = plane.client
    await waitFor(
      async () => {
        const parent = await client.get<PodService>(PODSERVICES, 'nginx', { namespace })
        const ready = parent.status?.conditions?.find((c) => c.type === 'Ready')
        return (
          parent.status?.serviceAddress !== undefined && (!hasNodes || ready?.status === 'True')
        )
      },
      {
        timeoutMs: 30_000,
        description: hasNodes
          ? 'the PodService status to show the Service address and Ready True'
          : 'the PodService status to show the Service address',
      }
    )
    steps.line()
    for (const line of await tree(client, namespace)) steps.line(line)
    steps.done()
    return { plane, stack, namespace, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

function ownedBy(parent: KubeObject): (o: KubeObject) => boolean {
  return (o) => (o.metadata.ownerReferences ?? []).some((r) => r.uid === parent.metadata.uid)
}

/** The PodService `nginx` and the children it owns, as lines of a tree. */
export async function tree(
  client: DynamicClient,
  namespace: string,
  name = 'nginx'
): Promise<string[]> {
  const parent = await client.get<PodService>(PODSERVICES, name, { namespace })
  const status = parent.status ?? {}
  const ready = status.conditions?.find((c) => c.type === 'Ready')
  const owned = ownedBy(parent)
  const [pods, services, ingresses] = await Promise.all([
    client.list<Pod>(PODS, { namespace }),
    client.list<Service>(SERVICES, { namespace }),
    client.list<Ingress>(INGRESSES, { namespace }),
  ])
  const rows: [string, string][] = []
  for (const pod of pods.items.filter(owned)) {
    const container = pod.spec?.containers[0]
    const resources = container?.resources
    rows.push([
      `Pod ${pod.metadata.name ?? ''}`,
      `uid ${shortUid(pod)}…, phase ${pod.status?.phase ?? '?'}` +
        (pod.spec?.nodeName === undefined ? '' : ` on ${pod.spec.nodeName}`) +
        (pod.status?.podIP === undefined ? '' : ` IP ${pod.status.podIP}`) +
        `, image ${container?.image ?? '?'}, ` +
        `cpu ${resources?.requests?.['cpu'] ?? '?'}/${resources?.limits?.['cpu'] ?? '?'}, ` +
        `memory ${resources?.requests?.['memory'] ?? '?'}/${resources?.limits?.['memory'] ?? '?'} ` +
        '(request/limit)',
    ])
  }
  for (const service of services.items.filter(owned)) {
    const port = service.spec?.ports?.[0]
    rows.push([
      `Service ${service.metadata.name ?? ''}`,
      `uid ${shortUid(service)}…, ${service.spec?.type ?? '?'} ${service.spec?.clusterIP ?? '?'}:` +
        `${String(port?.port ?? '?')} → targetPort ${String(port?.targetPort ?? '?')}`,
    ])
  }
  for (const ingress of ingresses.items.filter(owned)) {
    const rule = ingress.spec?.rules?.[0]
    const path = rule?.http?.paths[0]
    rows.push([
      `Ingress ${ingress.metadata.name ?? ''}`,
      `uid ${shortUid(ingress)}…, ${rule?.host ?? '*'}${path?.path ?? ''} → ` +
        `${path?.backend.service?.name ?? '?'}:${String(path?.backend.service?.port?.number ?? '?')}`,
    ])
  }
  const width = Math.max(...rows.map(([label]) => label.length), 0)
  const lines = [
    `PodService ${name}: pods ${String(status.pods ?? '?')}, services ${String(status.services ?? '?')}` +
      `${status.ingresses === undefined ? '' : `, ingresses ${String(status.ingresses)}`}, ` +
      `Ready ${ready?.status ?? '?'} (${ready?.reason ?? '?'}), ` +
      `address ${status.serviceAddress ?? '-'}, observedGeneration ${String(status.observedGeneration ?? '?')}`,
  ]
  rows.forEach(([label, detail], index) => {
    const branch = index === rows.length - 1 ? '└─' : '├─'
    lines.push(`${branch} ${label.padEnd(width)}  ${detail}`)
  })
  if (rows.length === 0) lines.push('└─ (no children)')
  return lines
}

/** One state a Pod was seen in by a watch: its phase, node and readiness. */
export interface PodState {
  readonly uid: string
  readonly phase: string
  readonly nodeName: string | undefined
  readonly ready: boolean
  readonly podIP: string | undefined
}

function podState(pod: Pod): PodState {
  return {
    uid: pod.metadata.uid ?? '',
    phase: pod.status?.phase ?? 'Pending',
    nodeName: pod.spec?.nodeName,
    ready: pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    podIP: pod.status?.podIP,
  }
}

/**
 * Watches Pod `name` from `resourceVersion` and returns the distinct states of the first Pod
 * (by UID) for which `select` is true, up to the first state for which `until` is true. A watch
 * sees every write, so a Pending phase that lasts a few milliseconds is not missed.
 */
export async function watchPodStates(
  client: DynamicClient,
  namespace: string,
  name: string,
  resourceVersion: string,
  select: (pod: Pod) => boolean,
  until: (state: PodState) => boolean,
  timeoutMs = 30_000
): Promise<PodState[]> {
  const signal = AbortSignal.timeout(timeoutMs)
  const stream = await client.watch(PODS, {
    namespace,
    fieldSelector: `metadata.name=${name}`,
    resourceVersion,
    signal,
  })
  const states: PodState[] = []
  let uid: string | undefined
  for await (const event of readWatchEvents(stream.body)) {
    if (event.type !== 'ADDED' && event.type !== 'MODIFIED') continue
    const pod = event.object as Pod
    if (uid === undefined && select(pod)) uid = pod.metadata.uid
    if (uid === undefined || pod.metadata.uid !== uid) continue
    const state = podState(pod)
    if (JSON.stringify(states.at(-1)) !== JSON.stringify(state)) states.push(state)
    if (until(state)) return states
  }
  throw new Error(`the watch of Pod ${name} ended before the Pod reached the expected state`)
}

/** Describes a Pod state in a few words, e.g. `Pending, scheduled to metactl-node-0`. */
export function describePodState(state: PodState): string {
  if (state.phase === 'Pending') {
    return state.nodeName === undefined ? 'Pending' : `Pending, scheduled to ${state.nodeName}`
  }
  const ready = state.ready ? 'Ready' : 'not Ready'
  return `${state.phase}, ${ready}${state.podIP === undefined ? '' : `, IP ${state.podIP}`}`
}
