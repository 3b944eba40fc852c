/**
 * Simulated nodes for the local control plane: the Node objects we register and the KWOK stages
 * that play the kubelet's part (node status and heartbeats, the Pod lifecycle).
 *
 * @remarks
 * KWOK watches the Nodes that carry {@link SIMULATED_NODE_ANNOTATION} and the Pods bound to them,
 * and when an object matches a stage's selector it writes the stage's status template (Go
 * templates with KWOK's functions such as `Now`, `PodIPsWith`) or deletes the object. The stages
 * here are this project's own, written for what the tests and the demo need:
 *
 * - `node-ready`: a new Node becomes Ready, with its capacity kept as registered.
 * - `node-heartbeat`: Ready Nodes get fresh condition heartbeats every 1-1.5 min; KWOK also renews
 *   each Node's Lease, which is what the node lifecycle controller watches.
 * - `pod-running`: a Pod bound to a node becomes Running and Ready, with a Pod IP from the node's
 *   `podCIDR`, and every container `running`.
 * - `pod-succeeded`: a running Pod owned by a Job finishes with exit code 0.
 * - `pod-terminated`: a Pod being deleted is removed (grace period 0), as a kubelet does once the
 *   containers have stopped.
 *
 * **Caveats** No container runs: no image is pulled, probes and readiness gates are ignored, and
 * no traffic reaches a Pod IP.
 *
 * @module
 */
import { stringify } from 'yaml'
import type { KubeObject } from '../core/kube-object.js'
import type { DynamicClient, ResourceRef } from '../kube/dynamic-client.js'
import { AlreadyExistsError, NotFoundError } from '../kube/api-error.js'

/** The annotation KWOK selects its Nodes by (`--manage-nodes-with-annotation-selector`). */
export const SIMULATED_NODE_ANNOTATION = 'kwok.x-k8s.io/node'
/** Pods each simulated node accepts (the kubelet's default maximum). */
export const PODS_PER_NODE = 110
/** Lease duration KWOK renews each Node's Lease with (renewed every quarter of it). */
export const NODE_LEASE_SECONDS = 40

/** `v1 nodes` (cluster-scoped). */
export const NODES: ResourceRef = { group: '', version: 'v1', resource: 'nodes', namespaced: false }
/** `coordination.k8s.io/v1 leases`: each node's heartbeat lives in `kube-node-lease`. */
const LEASES: ResourceRef = {
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  namespaced: true,
}

/** Returns the name of the simulated node with this index (0-based). */
export function simulatedNodeName(index: number): string {
  return `metactl-node-${index}`
}

/**
 * Returns the Node object of simulated node `index`: labelled like a Linux node, with its own
 * Pod CIDR (`10.244.<index>.0/24`) and address, and capacity for {@link PODS_PER_NODE} Pods.
 * Node status may be set on create (a kubelet registers the same way), so the capacity the
 * scheduler sees is there before KWOK marks the node Ready.
 */
export function simulatedNode(index: number): KubeObject {
  if (!Number.isInteger(index) || index < 0 || index > 255) {
    throw new RangeError(`simulated node index must be 0..255, got ${index}`)
  }
  const name = simulatedNodeName(index)
  const resources = { cpu: '32', memory: '256Gi', pods: String(PODS_PER_NODE) }
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { [SIMULATED_NODE_ANNOTATION]: 'fake' },
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        type: 'kwok',
      },
    },
    spec: { podCIDR: `10.244.${index}.0/24`, podCIDRs: [`10.244.${index}.0/24`] },
    status: {
      addresses: [
        { type: 'InternalIP', address: `172.30.0.${index + 1}` },
        { type: 'Hostname', address: name },
      ],
      capacity: resources,
      allocatable: resources,
    },
  }
}

// The conditions a healthy kubelet reports; the template stamps them with the current time.
const NODE_CONDITIONS_TEMPLATE = `{{ $now := Now }}
{{ $since := or .metadata.creationTimestamp $now }}
conditions:
{{ range $c := list
  (list "Ready" "True" "KubeletReady" "kubelet is posting ready status (simulated by KWOK)")
  (list "MemoryPressure" "False" "KubeletHasSufficientMemory" "kubelet has sufficient memory available")
  (list "DiskPressure" "False" "KubeletHasNoDiskPressure" "kubelet has no disk pressure")
  (list "PIDPressure" "False" "KubeletHasSufficientPID" "kubelet has sufficient PID available") }}
- type: {{ index $c 0 | Quote }}
  status: {{ index $c 1 | Quote }}
  reason: {{ index $c 2 | Quote }}
  message: {{ index $c 3 | Quote }}
  lastHeartbeatTime: {{ $now | Quote }}
  lastTransitionTime: {{ $since | Quote }}
{{ end }}
`

const NODE_READY_TEMPLATE = `${NODE_CONDITIONS_TEMPLATE}
nodeInfo:
  architecture: amd64
  operatingSystem: linux
  kubeletVersion: {{ printf "kwok-%s" Version | Quote }}
  kubeProxyVersion: {{ printf "kwok-%s" Version | Quote }}
  containerRuntimeVersion: {{ printf "kwok-%s" Version | Quote }}
  kernelVersion: {{ printf "kwok-%s" Version | Quote }}
  osImage: "simulated"
  machineID: ""
  systemUUID: ""
  bootID: ""
phase: Running
`

const POD_RUNNING_TEMPLATE = `{{ $now := Now }}
conditions:
- { type: PodReadyToStartContainers, status: "True", lastTransitionTime: {{ $now | Quote }} }
- { type: Initialized, status: "True", lastTransitionTime: {{ $now | Quote }} }
- { type: ContainersReady, status: "True", lastTransitionTime: {{ $now | Quote }} }
- { type: Ready, status: "True", lastTransitionTime: {{ $now | Quote }} }
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  imageID: ""
  ready: true
  started: true
  restartCount: 0
  state: { running: { startedAt: {{ $now | Quote }} } }
{{ end }}
{{ with .spec.initContainers }}
initContainerStatuses:
{{ range . }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  imageID: ""
  ready: true
  restartCount: 0
  state: { terminated: { exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }} } }
{{ end }}
{{ end }}
{{ with NodeIPsWith .spec.nodeName }}
hostIP: {{ index . 0 | Quote }}
hostIPs:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}
{{ with PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
podIP: {{ index . 0 | Quote }}
podIPs:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}
phase: Running
startTime: {{ $now | Quote }}
`

const POD_SUCCEEDED_TEMPLATE = `{{ $now := Now }}
conditions:
- { type: ContainersReady, status: "False", reason: PodCompleted, lastTransitionTime: {{ $now | Quote }} }
- { type: Ready, status: "False", reason: PodCompleted, lastTransitionTime: {{ $now | Quote }} }
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  imageID: ""
  ready: false
  started: false
  restartCount: 0
  state: { terminated: { exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }} } }
{{ end }}
phase: Succeeded
`

interface Expression {
  readonly key: string
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'
  readonly values?: readonly string[]
}

function stage(
  name: string,
  kind: 'Node' | 'Pod',
  matchExpressions: readonly Expression[],
  next: Record<string, unknown>,
  delay?: { durationMilliseconds: number; jitterDurationMilliseconds: number }
): KubeObject {
  return {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Stage',
    metadata: { name },
    spec: {
      resourceRef: { apiGroup: 'v1', kind },
      selector: { matchExpressions },
      ...(delay === undefined ? {} : { delay }),
      next,
    },
  }
}

const NOT_DELETING: Expression = { key: '.metadata.deletionTimestamp', operator: 'DoesNotExist' }
const READY_STATUS = '.status.conditions.[] | select( .type == "Ready" ) | .status'

/** Returns the KWOK stages described in this module, as objects. */
export function simulatedNodeStages(): KubeObject[] {
  return [
    stage('node-ready', 'Node', [{ key: READY_STATUS, operator: 'NotIn', values: ['True'] }], {
      statusTemplate: NODE_READY_TEMPLATE,
    }),
    stage(
      'node-heartbeat',
      'Node',
      [
        { key: '.status.phase', operator: 'In', values: ['Running'] },
        { key: READY_STATUS, operator: 'In', values: ['True'] },
      ],
      { statusTemplate: NODE_CONDITIONS_TEMPLATE },
      // The jitter bound is absolute: each heartbeat comes 60-90 s after the previous one.
      { durationMilliseconds: 60_000, jitterDurationMilliseconds: 90_000 }
    ),
    stage(
      'pod-running',
      'Pod',
      [
        NOT_DELETING,
        { key: '.status.phase', operator: 'In', values: ['Pending'] },
        { key: READY_STATUS, operator: 'NotIn', values: ['True'] },
      ],
      { statusTemplate: POD_RUNNING_TEMPLATE }
    ),
    stage(
      'pod-succeeded',
      'Pod',
      [
        NOT_DELETING,
        { key: '.status.phase', operator: 'In', values: ['Running'] },
        { key: '.metadata.ownerReferences.[].kind', operator: 'In', values: ['Job'] },
      ],
      { statusTemplate: POD_SUCCEEDED_TEMPLATE }
    ),
    stage('pod-terminated', 'Pod', [{ key: '.metadata.deletionTimestamp', operator: 'Exists' }], {
      delete: true,
    }),
  ]
}

/** Returns the KWOK configuration file: the stages as a multi-document YAML stream. */
export function kwokConfigYaml(): string {
  return simulatedNodeStages()
    .map((s) => stringify(s, { lineWidth: 0 }))
    .join('---\n')
}

/**
 * Makes the simulated nodes exactly `0..count-1`: creates the missing ones and deletes simulated
 * nodes beyond `count` (left by an earlier `cluster up --nodes N` on the same data). Other Nodes
 * are not touched. Call it before KWOK starts: it also deletes the nodes' Leases left by an
 * earlier KWOK, which a new one would otherwise wait out (up to 40 s) before taking them over.
 * Returns the names.
 */
export async function ensureSimulatedNodes(
  client: DynamicClient,
  count: number
): Promise<string[]> {
  const names = Array.from({ length: count }, (_, index) => simulatedNodeName(index))
  const existing = await client.list(NODES)
  for (const node of existing.items) {
    const name = node.metadata.name ?? ''
    const simulated = node.metadata.annotations?.[SIMULATED_NODE_ANNOTATION] !== undefined
    if (simulated && !names.includes(name)) await client.delete(NODES, name)
  }
  for (let index = 0; index < count; index++) {
    try {
      await client.create(NODES, simulatedNode(index))
    } catch (error) {
      if (!(error instanceof AlreadyExistsError)) throw error
    }
    await client
      .delete(LEASES, simulatedNodeName(index), { namespace: 'kube-node-lease' })
      .catch((error: unknown) => {
        if (!(error instanceof NotFoundError)) throw error
      })
  }
  return names
}

/**
 * Tells whether every named node is Ready, free of `NoSchedule` taints (the node lifecycle
 * controller taints a node `not-ready` until it sees it Ready, and the scheduler would leave Pods
 * Pending until the taint is gone) and has a Lease renewed since `since`. The Lease proves that
 * this KWOK manages the node: a node kept from an earlier run can still say Ready.
 */
export async function simulatedNodesSchedulable(
  client: DynamicClient,
  names: readonly string[],
  since: Date
): Promise<boolean> {
  const list = await client.list(NODES)
  const schedulable = new Set(
    list.items.filter((n) => isNodeReady(n) && !hasNoScheduleTaint(n)).map((n) => n.metadata.name)
  )
  if (!names.every((name) => schedulable.has(name))) return false
  const leases = await client.list(LEASES, { namespace: 'kube-node-lease' })
  const renewed = new Set(
    leases.items
      .filter((lease) => {
        const renewTime = field(lease, 'spec')['renewTime']
        return typeof renewTime === 'string' && Date.parse(renewTime) >= since.getTime() - 1000
      })
      .map((lease) => lease.metadata.name)
  )
  return names.every((name) => renewed.has(name))
}

function records(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value)
    ? value.filter((v): v is Record<string, unknown> => typeof v === 'object' && v !== null)
    : []
}

function field(object: KubeObject, key: 'spec' | 'status'): Record<string, unknown> {
  const value = object[key]
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {}
}

function hasNoScheduleTaint(node: KubeObject): boolean {
  return records(field(node, 'spec')['taints']).some((t) => t['effect'] === 'NoSchedule')
}

/** Tells whether a Node object's `Ready` condition is `True`. */
export function isNodeReady(node: KubeObject): boolean {
  return records(field(node, 'status')['conditions']).some(
    (c) => c['type'] === 'Ready' && c['status'] === 'True'
  )
}
