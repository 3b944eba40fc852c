/**
 * The proof that kube-controller-manager's garbage collector works: `/healthz` says the process
 * is up, not that the collector has synced its informers; a dependent that is actually collected
 * is the only proof.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { NotFoundError } from '../kube/api-error.js'
import type { DynamicClient } from '../kube/dynamic-client.js'
import { CONFIGMAPS } from '../kube/well-known-resources.js'
import { waitFor } from '../runtime/clock/wait-for.js'

/**
 * Creates an owner ConfigMap and a dependent, deletes the owner and waits until the garbage
 * collector has deleted the dependent.
 *
 * @throws the `waitFor` timeout when it is not collected within `timeoutMs`.
 */
export async function garbageCollectorCanary(
  client: DynamicClient,
  timeoutMs: number
): Promise<void> {
  const name = `metactl-gc-canary-${randomBytes(4).toString('hex')}`
  const owner = await client.create(CONFIGMAPS, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `${name}-owner`, namespace: 'default' },
  })
  await client.create(CONFIGMAPS, {
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
  await client.delete(CONFIGMAPS, `${name}-owner`, { namespace: 'default' })
  await waitFor(
    async () => {
      try {
        await client.get(CONFIGMAPS, `${name}-child`, { namespace: 'default' })
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
}
