/**
 * The PodService sync hook: for each PodService, one Pod and one ClusterIP Service of the same
 * name (and an Ingress when `spec.ingress` is set), and a status with the observed counts, a
 * `Ready` condition and the Service's address.
 *
 * @remarks
 * The same function runs as a webhook (`server.ts`, `controller.yaml`) or in-process in the
 * engine ({@link podServiceController}). It is pure: the answer depends only on the request (and
 * the clock, for a condition's `lastTransitionTime` when its status changes and no running Pod
 * gives the time), so re-running it never causes writes.
 *
 * @module
 */
import { countObserved, defineCompositeHook, inProcessHooks, listObserved } from 'metacontroller-ts'
import type {
  CompositeHook,
  Ingress as SdkIngress,
  KubeObject,
  Pod as SdkPod,
  Service as SdkService,
} from 'metacontroller-ts'
import { podQuantity } from './quantity.js'

/** The name of the CompositeController, in `controller.yaml` and in-process. */
export const CONTROLLER_NAME = 'podservice-controller'

/** The label on every child, and the Service's selector. */
export const NAME_LABEL = 'app.kubernetes.io/name'

/** What the hook uses when a field of `spec` is missing. */
export const DEFAULTS = {
  image: 'nginx:latest',
  port: 80,
  cpuLimit: '50m',
  memLimit: '64Mi',
  cpuReq: '10m',
  memReq: '32Mi',
  ingressPath: '/',
} as const

/** `spec.ingress`: route `host` + `path` to the Service. */
export interface PodServiceIngress {
  readonly host: string
  /** Path prefix (`/`). */
  readonly path?: string
  /** IngressClass name (the cluster's default class when absent). */
  readonly class?: string
}

/** `spec` of a PodService; every field but `image` is optional (see {@link DEFAULTS}). */
export interface PodServiceSpec {
  readonly image?: string
  readonly port?: number
  readonly cpuLimit?: string
  readonly memLimit?: string
  readonly cpuReq?: string
  readonly memReq?: string
  readonly ingress?: PodServiceIngress
}

/** A condition in the style of `metav1.Condition`. */
export interface PodServiceCondition {
  /** `Ready`, the only condition this hook writes. */
  readonly type: string
  readonly status: 'True' | 'False' | 'Unknown'
  /** `PodReady`, `PodNotReady`, `PodPending`, `PodMissing`, `PodTerminating`, `PodFailed`, … */
  readonly reason: string
  readonly message: string
  readonly lastTransitionTime: string
  readonly observedGeneration?: number
}

/** The status the hook writes (the engine adds `observedGeneration`). */
export interface PodServiceStatus {
  /** Pods the controller observes. */
  readonly pods: number
  /** Services the controller observes. */
  readonly services: number
  /** Ingresses the controller observes; present when `spec.ingress` is set or one exists. */
  readonly ingresses?: number
  /** `clusterIP:port`, once the Service has a cluster IP. */
  readonly serviceAddress?: string
  /** The Service's in-cluster DNS name, once the Service exists. */
  readonly serviceDNS?: string
  readonly conditions: readonly PodServiceCondition[]
  /** Written by the engine: the `metadata.generation` it last synced. */
  readonly observedGeneration?: number
}

/** A PodService (`homelabz.com.br/v1`). */
export interface PodService extends KubeObject {
  spec?: PodServiceSpec
  /** What the last sync wrote; empty before the first. */
  status?: Partial<PodServiceStatus>
}

/**
 * The child types, from the SDK's Kubernetes types, required to carry apiVersion, kind and
 * metadata as every object the API server returns does.
 */
export type Pod = KubeObject & SdkPod
/** A Service (see {@link Pod}). */
export type Service = KubeObject & SdkService
/** An Ingress (see {@link Pod}). */
export type Ingress = KubeObject & SdkIngress

/** Every child type of the controller. */
export type PodServiceChild = Pod | Service | Ingress

/** The spec of the CompositeController, as in `controller.yaml` minus the webhook. */
export const podServiceControllerSpec = {
  generateSelector: true,
  parentResource: { apiVersion: 'homelabz.com.br/v1', resource: 'podservices' },
  childResources: [
    { apiVersion: 'v1', resource: 'pods', updateStrategy: { method: 'Recreate' } },
    { apiVersion: 'v1', resource: 'services', updateStrategy: { method: 'InPlace' } },
    {
      apiVersion: 'networking.k8s.io/v1',
      resource: 'ingresses',
      updateStrategy: { method: 'InPlace' },
    },
  ],
  hooks: { sync: {} },
} as const

/** The resolved settings of a PodService: its spec with the defaults filled in. */
export interface PodServiceSettings {
  readonly name: string
  readonly namespace: string
  readonly image: string
  readonly port: number
  readonly cpuLimit: string
  readonly memLimit: string
  readonly cpuReq: string
  readonly memReq: string
  readonly ingress?: Required<Pick<PodServiceIngress, 'host' | 'path'>> & {
    readonly className?: string
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}

/** Reads a quantity as the API server will store it (so that the Pod never looks changed). */
function quantity(value: string | undefined, fallback: string): string {
  const text = nonEmpty(value) ?? fallback
  return podQuantity(text) ?? text
}

/** Fills in the defaults of a PodService's spec. */
export function settingsOf(parent: PodService): PodServiceSettings {
  const spec: PodServiceSpec = parent.spec ?? {}
  const ingress = spec.ingress
  const className = nonEmpty(ingress?.class)
  return {
    name: parent.metadata.name ?? '',
    namespace: parent.metadata.namespace ?? '',
    image: nonEmpty(spec.image) ?? DEFAULTS.image,
    port: typeof spec.port === 'number' ? spec.port : DEFAULTS.port,
    cpuLimit: quantity(spec.cpuLimit, DEFAULTS.cpuLimit),
    memLimit: quantity(spec.memLimit, DEFAULTS.memLimit),
    cpuReq: quantity(spec.cpuReq, DEFAULTS.cpuReq),
    memReq: quantity(spec.memReq, DEFAULTS.memReq),
    ...(ingress === undefined
      ? {}
      : {
          ingress: {
            host: ingress.host,
            path: nonEmpty(ingress.path) ?? DEFAULTS.ingressPath,
            ...(className === undefined ? {} : { className }),
          },
        }),
  }
}

/** The desired Pod. */
export function desiredPod(settings: PodServiceSettings): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: settings.name, labels: { [NAME_LABEL]: settings.name } },
    spec: {
      restartPolicy: 'OnFailure',
      containers: [
        {
          name: settings.name,
          image: settings.image,
          ports: [{ containerPort: settings.port, name: 'http', protocol: 'TCP' }],
          resources: {
            limits: { cpu: settings.cpuLimit, memory: settings.memLimit },
            requests: { cpu: settings.cpuReq, memory: settings.memReq },
          },
        },
      ],
    },
  }
}

/** The desired ClusterIP Service. */
export function desiredService(settings: PodServiceSettings): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: settings.name, labels: { [NAME_LABEL]: settings.name } },
    spec: {
      type: 'ClusterIP',
      selector: { [NAME_LABEL]: settings.name },
      ports: [{ name: 'http', port: settings.port, targetPort: settings.port, protocol: 'TCP' }],
    },
  }
}

/** The desired Ingress, when `spec.ingress` is set. */
export function desiredIngress(settings: PodServiceSettings): Ingress | undefined {
  const ingress = settings.ingress
  if (ingress === undefined) return undefined
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: settings.name, labels: { [NAME_LABEL]: settings.name } },
    spec: {
      ...(ingress.className === undefined ? {} : { ingressClassName: ingress.className }),
      rules: [
        {
          host: ingress.host,
          http: {
            paths: [
              {
                path: ingress.path,
                pathType: 'Prefix',
                backend: { service: { name: settings.name, port: { number: settings.port } } },
              },
            ],
          },
        },
      ],
    },
  }
}

/**
 * The Ready condition's status, reason and message for the observed Pod; with `since`, the running
 * Pod's own Ready time, which flips exactly when this condition does.
 */
function readiness(
  name: string,
  pod: Pod | undefined
): Pick<PodServiceCondition, 'status' | 'reason' | 'message'> & { since?: string } {
  if (pod === undefined) {
    return { status: 'False', reason: 'PodMissing', message: `Pod ${name} does not exist yet` }
  }
  if (pod.metadata.deletionTimestamp !== undefined) {
    return { status: 'False', reason: 'PodTerminating', message: `Pod ${name} is being deleted` }
  }
  const phase = pod.status?.phase ?? 'Pending'
  switch (phase) {
    case 'Running': {
      const condition = pod.status?.conditions?.find((c) => c.type === 'Ready')
      const since =
        condition?.lastTransitionTime === undefined ? {} : { since: condition.lastTransitionTime }
      return condition?.status === 'True'
        ? {
            status: 'True',
            reason: 'PodReady',
            message: `Pod ${name} is running and ready`,
            ...since,
          }
        : {
            status: 'False',
            reason: 'PodNotReady',
            message: `Pod ${name} is running, not ready`,
            ...since,
          }
    }
    case 'Pending': {
      const unscheduled = pod.spec?.nodeName === undefined || pod.spec.nodeName === ''
      return {
        status: 'False',
        reason: 'PodPending',
        message: `Pod ${name} is Pending${unscheduled ? ' (not scheduled to a node yet)' : ''}`,
      }
    }
    case 'Succeeded':
    case 'Failed':
      return {
        status: 'False',
        reason: `Pod${phase}`,
        message: `Pod ${name} has ${phase.toLowerCase()}`,
      }
    default:
      return {
        status: 'Unknown',
        reason: 'PodUnknown',
        message: `Pod ${name} is in phase ${phase}`,
      }
  }
}

function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z')
}

/** Options of {@link createPodServiceSync}. */
export interface PodServiceSyncOptions {
  /** The clock for `lastTransitionTime` (the system clock). */
  readonly now?: () => Date
  /** The cluster's DNS domain, for `status.serviceDNS` (`cluster.local`). */
  readonly clusterDomain?: string
}

/** Builds the sync hook; {@link sync} is the one with the system clock. */
export function createPodServiceSync(
  options: PodServiceSyncOptions = {}
): CompositeHook<PodService, PodServiceChild, PodServiceStatus> {
  const now = options.now ?? ((): Date => new Date())
  const domain = options.clusterDomain ?? 'cluster.local'
  return defineCompositeHook<PodService, PodServiceChild, PodServiceStatus>(
    ({ parent, children }) => {
      const settings = settingsOf(parent)
      const ingress = desiredIngress(settings)
      const pod = listObserved(children, 'Pod.v1').find((o) => o.metadata.name === settings.name)
      const service = listObserved(children, 'Service.v1').find(
        (o) => o.metadata.name === settings.name
      )
      const ingresses = countObserved(children, 'Ingress.networking.k8s.io/v1')

      const { since, ...ready } = readiness(settings.name, pod)
      const previous = parent.status?.conditions?.find((c) => c.type === 'Ready')
      const condition: PodServiceCondition = {
        type: 'Ready',
        ...ready,
        // A running Pod's own time does not depend on the parent's status, which a sync woken by
        // a child's event may see before the engine's last status write (two such syncs would
        // otherwise write two different times, one after the other). Otherwise the time is kept
        // while the status stays the same, so an unchanged world writes nothing.
        lastTransitionTime:
          since ??
          (previous?.status === ready.status ? previous.lastTransitionTime : rfc3339(now())),
        ...(parent.metadata.generation === undefined
          ? {}
          : { observedGeneration: parent.metadata.generation }),
      }
      const clusterIP = service?.spec?.clusterIP
      const servicePort = service?.spec?.ports?.[0]?.port
      const status: PodServiceStatus = {
        pods: countObserved(children, 'Pod.v1'),
        services: countObserved(children, 'Service.v1'),
        ...(ingress !== undefined || ingresses > 0 ? { ingresses } : {}),
        ...(clusterIP !== undefined &&
        clusterIP !== '' &&
        clusterIP !== 'None' &&
        servicePort !== undefined
          ? { serviceAddress: `${clusterIP}:${servicePort}` }
          : {}),
        ...(service === undefined
          ? {}
          : { serviceDNS: `${settings.name}.${settings.namespace}.svc.${domain}` }),
        conditions: [condition],
      }
      return {
        status,
        children: [
          desiredPod(settings),
          desiredService(settings),
          ...(ingress === undefined ? [] : [ingress]),
        ],
      }
    }
  )
}

/** The PodService sync hook. */
export const sync: CompositeHook<PodService, PodServiceChild, PodServiceStatus> =
  createPodServiceSync()

/**
 * The controller for `Engine.addCompositeController`: the same spec and hook, run in-process.
 *
 * @example
 * ```ts
 * await engine.addCompositeController(podServiceController)
 * ```
 */
export const podServiceController = {
  name: CONTROLLER_NAME,
  spec: podServiceControllerSpec,
  hooks: inProcessHooks<PodService, PodServiceChild, PodServiceStatus>({ sync }),
}
