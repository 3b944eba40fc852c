// The NetworkPolicy decorator on a real control plane, next to the PodService controller: once
// with both hooks served as webhooks (the DecoratorController of decorator.yaml and the
// CompositeController of examples/podservice, their URLs rewritten) and once with both hooks
// in-process. Each run has its own namespace and its own engines, stopped before the next run.
//
// The control plane stores NetworkPolicies but nothing enforces them (there is no network
// plugin, and no nodes); this test checks what the decorator writes, not the traffic.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { DECORATOR_CONTROLLER_ANNOTATION } from 'metacontroller-ts/engine'
import { NotFoundError } from 'metacontroller-ts/kube'
import type { ResourceRef } from 'metacontroller-ts/kube'
import { createLogger } from 'metacontroller-ts/runtime'
import { startControlPlane, waitFor } from 'metacontroller-ts/testing'
import type { ControlPlane } from 'metacontroller-ts/testing'
import { NAME_LABEL } from '../podservice/hook.js'
import type { PodService } from '../podservice/hook.js'
import {
  MANIFESTS,
  NAMESPACES,
  PODSERVICES,
  loadSample,
  metacontrollerCrdFiles,
  startPodServiceStack,
} from '../podservice/stack.js'
import type { HookMode, PodServiceStack } from '../podservice/stack.js'
import {
  ALLOW_INGRESS_LABEL,
  DECORATOR_NAME,
  INGRESS_PORT_ANNOTATION,
  PROTECTED_LABEL,
} from './hook.js'
import type { NetworkPolicy } from './hook.js'
import { NETWORK_POLICIES, startNetpolDecorator } from './stack.js'
import type { NetpolDecoratorStack } from './stack.js'

const MODES: readonly { mode: HookMode; title: string; prefix: string }[] = [
  { mode: 'webhook', title: 'the hooks served as webhooks', prefix: 'np-webhook' },
  { mode: 'in-process', title: 'the hooks in-process', prefix: 'np-inproc' },
]
const WAIT = { timeoutMs: 30_000, intervalMs: 100 }
// When the PodService CRD is installed after kube-controller-manager started (a shared cluster
// from `metactl cluster up`), the garbage collector learns the kind at its next discovery sync,
// about 30 s later; deleting a PodService leaves its dependents until then.
const GC_WAIT = { timeoutMs: 120_000, intervalMs: 250 }
const POLICY = 'nginx-allow-ingress'

describe('PodService NetworkPolicy decorator, end to end', () => {
  let plane: ControlPlane

  before(async () => {
    plane = await startControlPlane({ crds: [...metacontrollerCrdFiles(), MANIFESTS.crd] })
  })

  after(async () => {
    await plane.stop()
  })

  for (const { mode, title, prefix } of MODES) {
    describe(`with ${title}`, () => {
      const ns = `${prefix}-${randomBytes(3).toString('hex')}`
      let podServices: PodServiceStack | undefined
      let decorator: NetpolDecoratorStack | undefined

      const get = <T extends PodService | NetworkPolicy>(ref: ResourceRef, name: string) =>
        plane.client.get<T>(ref, name, { namespace: ns })
      const waitForObject = <T extends PodService | NetworkPolicy>(
        ref: ResourceRef,
        name: string,
        check: (o: T) => boolean,
        description: string
      ): Promise<T> =>
        waitFor(
          async () => {
            const o = await get<T>(ref, name).catch((error: unknown) => {
              if (error instanceof NotFoundError) return undefined
              throw error
            })
            return o !== undefined && check(o) ? o : undefined
          },
          { ...WAIT, description }
        )
      const exists = async (ref: ResourceRef, name: string): Promise<boolean> => {
        try {
          await get(ref, name)
          return true
        } catch (error) {
          if (error instanceof NotFoundError) return false
          throw error
        }
      }

      before(async () => {
        const sample = loadSample(ns)
        await plane.client.create(NAMESPACES, sample.namespace)
        const log = createLogger({
          level: process.env['METACTL_TEST_LOG'] === '1' ? 'debug' : 'error',
        })
        podServices = await startPodServiceStack(plane.config, plane.client, mode, { log })
        decorator = await startNetpolDecorator(plane.config, plane.client, mode, { log })
        const optedIn: PodService = {
          ...sample.podService,
          metadata: {
            ...sample.podService.metadata,
            labels: { ...sample.podService.metadata.labels, [ALLOW_INGRESS_LABEL]: 'true' },
          },
        }
        await plane.client.create(PODSERVICES, optedIn)
        // Not opted in: the decorator must leave it alone.
        await plane.client.create(PODSERVICES, {
          ...sample.podService,
          metadata: { name: 'plain', namespace: ns },
        })
      })

      after(async () => {
        await decorator?.stop()
        await podServices?.stop()
        await plane.client.delete(NAMESPACES, ns).catch(() => undefined)
      })

      it('attaches a NetworkPolicy admitting TCP on the port to the Pod, owned by the PodService', async () => {
        const parent = await get<PodService>(PODSERVICES, 'nginx')
        const policy = await waitForObject<NetworkPolicy>(
          NETWORK_POLICIES,
          POLICY,
          () => true,
          `NetworkPolicy ${POLICY}`
        )
        assert.deepEqual(policy.spec?.podSelector, { matchLabels: { [NAME_LABEL]: 'nginx' } })
        assert.deepEqual(policy.spec.policyTypes, ['Ingress'])
        assert.deepEqual(policy.spec.ingress, [{ ports: [{ protocol: 'TCP', port: 80 }] }])
        assert.equal(policy.metadata.annotations?.[DECORATOR_CONTROLLER_ANNOTATION], DECORATOR_NAME)
        const owners = policy.metadata.ownerReferences ?? []
        assert.equal(owners.length, 1)
        assert.equal(owners[0]?.kind, 'PodService')
        assert.equal(owners[0].uid, parent.metadata.uid)
        assert.equal(owners[0].controller, true)
      })

      it('labels the PodService protected and annotates the open port', async () => {
        const parent = await waitForObject<PodService>(
          PODSERVICES,
          'nginx',
          (o) => o.metadata.labels?.[PROTECTED_LABEL] === 'true',
          `the label ${PROTECTED_LABEL} on PodService nginx`
        )
        assert.equal(parent.metadata.labels?.[ALLOW_INGRESS_LABEL], 'true')
        assert.equal(parent.metadata.annotations?.[INGRESS_PORT_ANNOTATION], 'TCP/80')
      })

      it('leaves the PodService status to the PodService controller', async () => {
        const parent = await waitForObject<PodService>(
          PODSERVICES,
          'nginx',
          (o) => o.status?.serviceAddress !== undefined,
          'the PodService status to show the Service address'
        )
        assert.equal(parent.status?.pods, 1)
        assert.equal(parent.status.services, 1)
      })

      it('leaves a PodService without the opt-in label alone', async () => {
        await waitForObject<PodService>(
          PODSERVICES,
          'plain',
          (o) => o.status?.pods === 1,
          'PodService plain to be synced by its controller'
        )
        const plain = await get<PodService>(PODSERVICES, 'plain')
        assert.equal(plain.metadata.labels?.[PROTECTED_LABEL], undefined)
        assert.equal(plain.metadata.annotations?.[INGRESS_PORT_ANNOTATION], undefined)
        assert.equal(await exists(NETWORK_POLICIES, 'plain-allow-ingress'), false)
      })

      it('settles: no more writes to the NetworkPolicy or the PodService once converged', async () => {
        const versions = async (): Promise<(string | undefined)[]> => [
          (await get(NETWORK_POLICIES, POLICY)).metadata.resourceVersion,
          (await get(PODSERVICES, 'nginx')).metadata.resourceVersion,
        ]
        const before = await versions()
        await new Promise((resolve) => setTimeout(resolve, 2000))
        assert.deepEqual(await versions(), before)
      })

      it('a new port updates the NetworkPolicy in place (same UID) and the annotation', async () => {
        const old = await get<NetworkPolicy>(NETWORK_POLICIES, POLICY)
        await plane.client.patch(
          PODSERVICES,
          'nginx',
          { spec: { port: 8080 } },
          { namespace: ns, type: 'merge' }
        )
        const policy = await waitForObject<NetworkPolicy>(
          NETWORK_POLICIES,
          POLICY,
          (p) => p.spec?.ingress?.[0]?.ports?.[0]?.port === 8080,
          'the NetworkPolicy on port 8080'
        )
        assert.equal(policy.metadata.uid, old.metadata.uid)
        assert.deepEqual(policy.spec?.ingress, [{ ports: [{ protocol: 'TCP', port: 8080 }] }])
        await waitForObject<PodService>(
          PODSERVICES,
          'nginx',
          (o) => o.metadata.annotations?.[INGRESS_PORT_ANNOTATION] === 'TCP/8080',
          'the annotation TCP/8080'
        )
      })

      it('deleting the PodService garbage-collects its NetworkPolicy', async () => {
        await plane.client.delete(PODSERVICES, 'nginx', { namespace: ns })
        await waitFor(async () => !(await exists(NETWORK_POLICIES, POLICY)), {
          ...GC_WAIT,
          description: `NetworkPolicy ${POLICY} to be garbage-collected`,
        })
        assert.equal(await exists(PODSERVICES, 'nginx'), false)
      })
    })
  }
})
