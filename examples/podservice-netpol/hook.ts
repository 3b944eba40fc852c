/**
 * The PodService NetworkPolicy decorator: for each PodService labelled
 * `netpol.homelabz.com.br/allow-ingress: "true"`, a NetworkPolicy that admits ingress traffic to
 * the PodService's Pod on its port only, the label `netpol.homelabz.com.br/protected: "true"`
 * and an annotation naming the open port on the PodService.
 *
 * @remarks
 * A DecoratorController adds to objects it does not own: the PodService controller keeps
 * creating the Pod and the Service, and this hook only adds the attachment and the metadata. It
 * never writes `status` (a decorator's status replaces the target's whole status, which belongs
 * to the PodService controller).
 *
 * The same function runs as a webhook (`server.ts`, `decorator.yaml`) or in-process in the
 * engine ({@link netpolDecorator}). It is pure, so re-running it never causes writes.
 *
 * @module
 */
import { defineDecoratorHook, inProcessDecoratorHooks } from 'metacontroller-ts'
import type { DecoratorHook, KubeObject } from 'metacontroller-ts'
import { NAME_LABEL, settingsOf } from '../podservice/hook.js'
import type { PodService } from '../podservice/hook.js'

/** The name of the DecoratorController, in `decorator.yaml` and in-process. */
export const DECORATOR_NAME = 'podservice-netpol'

/** Opt-in: the decorator only decorates PodServices with this label set to `"true"`. */
export const ALLOW_INGRESS_LABEL = 'netpol.homelabz.com.br/allow-ingress'

/** Set to `"true"` on every decorated PodService. */
export const PROTECTED_LABEL = 'netpol.homelabz.com.br/protected'

/** Set on every decorated PodService to the one port its Pod admits, e.g. `TCP/80`. */
export const INGRESS_PORT_ANNOTATION = 'netpol.homelabz.com.br/ingress-port'

/** A NetworkPolicy (`networking.k8s.io/v1`), with the fields this example writes. */
export interface NetworkPolicy extends KubeObject {
  kind: 'NetworkPolicy'
  spec?: {
    podSelector: { matchLabels?: Record<string, string> }
    policyTypes?: string[]
    ingress?: {
      from?: unknown[]
      ports?: { protocol?: string; port?: number | string; endPort?: number }[]
    }[]
  }
}

/** The spec of the DecoratorController, as in `decorator.yaml` minus the webhook. */
export const netpolDecoratorSpec = {
  resources: [
    {
      apiVersion: 'homelabz.com.br/v1',
      resource: 'podservices',
      labelSelector: { matchLabels: { [ALLOW_INGRESS_LABEL]: 'true' } },
    },
  ],
  attachments: [
    {
      apiVersion: 'networking.k8s.io/v1',
      resource: 'networkpolicies',
      updateStrategy: { method: 'InPlace' },
    },
  ],
  hooks: { sync: {} },
} as const

/** The name of a PodService's NetworkPolicy. */
export function networkPolicyName(podServiceName: string): string {
  return `${podServiceName}-allow-ingress`
}

/**
 * The desired NetworkPolicy: it selects the PodService's Pod by the label the PodService
 * controller puts on it, and admits TCP traffic from anywhere to the PodService's port; as the
 * policy selects the Pod for `Ingress`, every other port is closed to incoming traffic.
 */
export function desiredNetworkPolicy(podService: PodService): NetworkPolicy {
  const { name, port } = settingsOf(podService)
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: networkPolicyName(name), labels: { [NAME_LABEL]: name } },
    spec: {
      podSelector: { matchLabels: { [NAME_LABEL]: name } },
      policyTypes: ['Ingress'],
      ingress: [{ ports: [{ protocol: 'TCP', port }] }],
    },
  }
}

/** The decorator's sync hook. */
export const sync: DecoratorHook<PodService, NetworkPolicy> = defineDecoratorHook<
  PodService,
  NetworkPolicy
>(({ object }) => {
  // The same defaulting as the PodService controller, so the policy opens the Pod's real port.
  const { port } = settingsOf(object)
  return {
    labels: { [PROTECTED_LABEL]: 'true' },
    annotations: { [INGRESS_PORT_ANNOTATION]: `TCP/${String(port)}` },
    attachments: [desiredNetworkPolicy(object)],
  }
})

/**
 * The DecoratorController for `Engine.addDecoratorController`: the same spec and hook, run
 * in-process.
 *
 * @example
 * ```ts
 * await engine.addDecoratorController(netpolDecorator)
 * ```
 */
export const netpolDecorator = {
  name: DECORATOR_NAME,
  spec: netpolDecoratorSpec,
  hooks: inProcessDecoratorHooks<PodService, NetworkPolicy>({ sync }),
}
