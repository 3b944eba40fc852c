/**
 * The DecoratorController step of `make demo`: starts the NetworkPolicy decorator as a webhook
 * next to the running PodService controller, opts the PodService in, and prints the
 * NetworkPolicy and the PodService's new label.
 *
 * @module
 */
import { stringify } from 'yaml'
import { createLogger } from 'metacontroller-ts/runtime'
import { waitFor } from 'metacontroller-ts/testing'
import type { LocalPodService, Steps } from '../podservice/local.js'
import { shortUid, shown } from '../podservice/local.js'
import type { PodService } from '../podservice/hook.js'
import { PODSERVICES } from '../podservice/stack.js'
import {
  ALLOW_INGRESS_LABEL,
  INGRESS_PORT_ANNOTATION,
  PROTECTED_LABEL,
  networkPolicyName,
} from './hook.js'
import type { NetworkPolicy } from './hook.js'
import { DECORATOR_MANIFEST, NETWORK_POLICIES, startNetpolDecorator } from './stack.js'

/**
 * Runs the step on the demo's PodService `nginx`; stops the decorator before it returns (the
 * NetworkPolicy stays, owned by the PodService, so deleting the PodService deletes it too).
 */
export async function showNetworkPolicyDecorator(
  steps: Steps,
  local: LocalPodService,
  name = 'nginx'
): Promise<void> {
  const { plane, namespace } = local
  const client = plane.client
  steps.start(
    'DecoratorController: a NetworkPolicy for the PodService (examples/podservice-netpol)'
  )
  const decorator = await startNetpolDecorator(plane.config, client, 'webhook', {
    log: createLogger({ level: 'error', format: 'text' }),
  })
  try {
    steps.line(
      `hook:   serveHooks on ${decorator.hookUrl ?? '?'} (examples/podservice-netpol/hook.ts)`
    )
    steps.line(
      `DecoratorController podservice-netpol from ${shown(DECORATOR_MANIFEST)}, its url rewritten`
    )
    steps.line(`$ kubectl label podservice ${name} -n ${namespace} ${ALLOW_INGRESS_LABEL}=true`)
    await client.patch(
      PODSERVICES,
      name,
      { metadata: { labels: { [ALLOW_INGRESS_LABEL]: 'true' } } },
      { namespace, type: 'merge' }
    )
    const policyName = networkPolicyName(name)
    const policy = await waitFor(
      () =>
        client
          .get<NetworkPolicy>(NETWORK_POLICIES, policyName, { namespace })
          .catch(() => undefined),
      { timeoutMs: 30_000, intervalMs: 100, description: `NetworkPolicy ${policyName}` }
    )
    const parent = await waitFor(
      async () => {
        const o = await client.get<PodService>(PODSERVICES, name, { namespace })
        return o.metadata.labels?.[PROTECTED_LABEL] === 'true' ? o : undefined
      },
      { timeoutMs: 30_000, intervalMs: 100, description: `the label ${PROTECTED_LABEL}` }
    )
    const owner = policy.metadata.ownerReferences?.find((r) => r.controller === true)
    steps.line()
    steps.line(
      `NetworkPolicy ${policyName} (uid ${shortUid(policy)}…, controller ref ` +
        `${owner?.kind ?? '?'} ${owner?.name ?? '?'}):`
    )
    for (const line of stringify({ spec: policy.spec }).trimEnd().split('\n'))
      steps.line(`  ${line}`)
    steps.line(`PodService ${name}:`)
    steps.line(
      `  label      ${PROTECTED_LABEL}=${parent.metadata.labels?.[PROTECTED_LABEL] ?? '?'}`
    )
    steps.line(
      `  annotation ${INGRESS_PORT_ANNOTATION}=${parent.metadata.annotations?.[INGRESS_PORT_ANNOTATION] ?? '?'}`
    )
    steps.line('(stored, not enforced: the local control plane has no network plugin)')
  } finally {
    await decorator.stop()
  }
  steps.line('decorator stopped; the NetworkPolicy stays, and goes with the PodService (GC)')
  steps.done()
}
