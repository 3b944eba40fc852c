// The PodService walk-through of `make demo`, step by step and asserted, on a real control plane:
// once with the hook served as a webhook (the CompositeController of controller.yaml, its URL
// rewritten) and once with the hook in-process (Engine.addCompositeController). Each run has its
// own namespace and its own engine, stopped before the next run starts.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { CONTROLLER_UID_LABEL } from 'metacontroller-ts/engine'
import { InvalidError, NotFoundError } from 'metacontroller-ts/kube'
import type { ResourceRef } from 'metacontroller-ts/kube'
import { createLogger } from 'metacontroller-ts/runtime'
import { startControlPlane, waitFor } from 'metacontroller-ts/testing'
import type { ControlPlane } from 'metacontroller-ts/testing'
import { NAME_LABEL } from './hook.js'
import type { Ingress, Pod, PodService, Service } from './hook.js'
import {
  INGRESSES,
  MANIFESTS,
  NAMESPACES,
  PODS,
  PODSERVICES,
  SERVICES,
  loadSample,
  metacontrollerCrdFiles,
  startPodServiceStack,
} from './stack.js'
import type { HookMode, PodServiceStack } from './stack.js'
import { CONFIGMAPS } from 'metacontroller-ts/kube'

const MODES: readonly { mode: HookMode; title: string; prefix: string }[] = [
  { mode: 'webhook', title: 'the hook served as a webhook', prefix: 'ps-webhook' },
  { mode: 'in-process', title: 'the hook in-process', prefix: 'ps-inproc' },
]
const WAIT = { timeoutMs: 30_000, intervalMs: 100 }

/**
 * Resolves once the garbage collector collects a dependent of a PodService. When the CRD is
 * installed after kube-controller-manager started (a shared test cluster), the collector only
 * learns the new kind at its next discovery sync, about 30 s later; until then deleting a
 * PodService leaves its children in place.
 */
async function garbageCollectorKnowsPodServices(plane: ControlPlane): Promise<void> {
  const ns = `ps-gc-${randomBytes(3).toString('hex')}`
  await plane.client.create(NAMESPACES, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: ns },
  })
  try {
    const owner = await plane.client.create(PODSERVICES, {
      apiVersion: 'homelabz.com.br/v1',
      kind: 'PodService',
      metadata: { name: 'gc-canary', namespace: ns },
      spec: { image: 'gc-canary' },
    })
    await plane.client.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'gc-canary',
        namespace: ns,
        ownerReferences: [
          {
            apiVersion: 'homelabz.com.br/v1',
            kind: 'PodService',
            name: 'gc-canary',
            uid: owner.metadata.uid ?? '',
          },
        ],
      },
    })
    await plane.client.delete(PODSERVICES, 'gc-canary', { namespace: ns })
    await waitFor(
      async () => {
        try {
          await plane.client.get(CONFIGMAPS, 'gc-canary', { namespace: ns })
          return false
        } catch (error) {
          if (error instanceof NotFoundError) return true
          throw error
        }
      },
      {
        timeoutMs: 120_000,
        intervalMs: 250,
        description: 'the garbage collector to collect a dependent of a PodService',
      }
    )
  } finally {
    await plane.client.delete(NAMESPACES, ns).catch(() => undefined)
  }
}

describe('PodService example, end to end', () => {
  let plane: ControlPlane
  let gcReady: Promise<void>

  before(async () => {
    plane = await startControlPlane({ crds: [...metacontrollerCrdFiles(), MANIFESTS.crd] })
    // Checked while the other steps run; awaited only by the garbage-collection steps.
    gcReady = garbageCollectorKnowsPodServices(plane)
    gcReady.catch(() => undefined)
  })

  after(async () => {
    await plane.stop()
  })

  for (const { mode, title, prefix } of MODES) {
    describe(`with ${title}`, () => {
      const ns = `${prefix}-${randomBytes(3).toString('hex')}`
      let stack: PodServiceStack | undefined

      const get = <T extends PodService | Pod | Service | Ingress>(
        ref: ResourceRef,
        name = 'nginx'
      ): Promise<T> => plane.client.get<T>(ref, name, { namespace: ns })

      const waitForObject = <T extends PodService | Pod | Service | Ingress>(
        ref: ResourceRef,
        check: (o: T) => boolean,
        description: string
      ): Promise<T> =>
        waitFor(
          async () => {
            const o = await get<T>(ref)
            return check(o) ? o : undefined
          },
          { ...WAIT, description }
        )

      const waitForGone = (ref: ResourceRef): Promise<true> =>
        waitFor(
          async () => {
            try {
              await get(ref)
              return false
            } catch (error) {
              if (error instanceof NotFoundError) return true
              throw error
            }
          },
          { ...WAIT, description: `${ref.resource} nginx to be deleted` }
        )

      const patchSpec = (spec: Record<string, unknown>): Promise<PodService> =>
        plane.client.patch<PodService>(
          PODSERVICES,
          'nginx',
          { spec },
          { namespace: ns, type: 'merge' }
        )

      before(async () => {
        const sample = loadSample(ns)
        await plane.client.create(NAMESPACES, sample.namespace)
        stack = await startPodServiceStack(plane.config, plane.client, mode, {
          log: createLogger({ level: process.env['METACTL_TEST_LOG'] === '1' ? 'debug' : 'error' }),
        })
        await plane.client.create(PODSERVICES, sample.podService)
      })

      after(async () => {
        await stack?.stop()
        await plane.client.delete(NAMESPACES, ns).catch(() => undefined)
      })

      it('creates the Pod and the Service of sample.yaml with their exact fields', async () => {
        const parent = await get<PodService>(PODSERVICES)
        const pod = await waitForObject<Pod>(PODS, () => true, 'Pod nginx')
        assert.equal(pod.metadata.labels?.[NAME_LABEL], 'nginx')
        assert.equal(pod.metadata.labels[CONTROLLER_UID_LABEL], parent.metadata.uid)
        const [owner] = pod.metadata.ownerReferences ?? []
        assert.equal(owner?.kind, 'PodService')
        assert.equal(owner.uid, parent.metadata.uid)
        assert.equal(owner.controller, true)
        assert.equal(pod.spec?.restartPolicy, 'OnFailure')
        assert.equal(pod.spec.containers.length, 1)
        const [container] = pod.spec.containers
        assert.equal(container?.name, 'nginx')
        assert.equal(container.image, 'nginx:stable-alpine')
        assert.deepEqual(container.ports, [{ containerPort: 80, name: 'http', protocol: 'TCP' }])
        assert.deepEqual(container.resources, {
          limits: { cpu: '100m', memory: '128Mi' },
          requests: { cpu: '50m', memory: '64Mi' },
        })

        const service = await waitForObject<Service>(SERVICES, () => true, 'Service nginx')
        assert.equal(service.metadata.labels?.[NAME_LABEL], 'nginx')
        assert.equal(service.metadata.ownerReferences?.[0]?.uid, parent.metadata.uid)
        assert.equal(service.spec?.type, 'ClusterIP')
        assert.match(service.spec.clusterIP ?? '', /^\d+\.\d+\.\d+\.\d+$/)
        assert.deepEqual(service.spec.selector, { [NAME_LABEL]: 'nginx' })
        assert.deepEqual(service.spec.ports, [
          { name: 'http', port: 80, targetPort: 80, protocol: 'TCP' },
        ])
      })

      it('reports pods 1, services 1, observedGeneration, Ready True and the address', async () => {
        const service = await get<Service>(SERVICES)
        // The test cluster has a simulated node: the Pod is scheduled, runs and becomes Ready.
        const parent = await waitForObject<PodService>(
          PODSERVICES,
          (o) =>
            o.status?.serviceAddress !== undefined &&
            o.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
          'the PodService status to show the Service address and Ready True'
        )
        const status = parent.status ?? {}
        assert.equal(status.pods, 1)
        assert.equal(status.services, 1)
        assert.equal(status.ingresses, undefined)
        assert.equal(status.observedGeneration, parent.metadata.generation)
        assert.equal(status.serviceAddress, `${service.spec?.clusterIP ?? ''}:80`)
        assert.equal(status.serviceDNS, `nginx.${ns}.svc.cluster.local`)
        assert.equal(status.conditions?.length, 1)
        const [ready] = status.conditions ?? []
        assert.equal(ready?.type, 'Ready')
        assert.equal(ready.status, 'True')
        assert.equal(ready.reason, 'PodReady')
        assert.equal(ready.message, 'Pod nginx is running and ready')
        assert.equal(ready.observedGeneration, parent.metadata.generation)
        const pod = await get<Pod>(PODS)
        assert.equal(pod.status?.phase, 'Running')
        assert.ok(pod.spec?.nodeName, 'the Pod is bound to a node')
      })

      it('settles: no more writes to the PodService, Pod or Service once converged', async () => {
        const versions = async (): Promise<(string | undefined)[]> =>
          Promise.all(
            [PODSERVICES, PODS, SERVICES].map(
              async (ref) => (await get(ref)).metadata.resourceVersion
            )
          )
        const before = await versions()
        await new Promise((resolve) => setTimeout(resolve, 2000))
        assert.deepEqual(await versions(), before)
      })

      it('a new image recreates the Pod (new UID) and leaves the Service alone', async () => {
        const oldPod = await get<Pod>(PODS)
        const oldService = await get<Service>(SERVICES)
        await patchSpec({ image: 'nginx:1.27-alpine' })
        const pod = await waitForObject<Pod>(
          PODS,
          (p) => p.spec?.containers[0]?.image === 'nginx:1.27-alpine',
          'the Pod with the new image'
        )
        assert.notEqual(pod.metadata.uid, oldPod.metadata.uid)
        const running = await waitForObject<Pod>(
          PODS,
          (p) => p.metadata.uid === pod.metadata.uid && p.status?.phase === 'Running',
          'the new Pod to be Running'
        )
        assert.ok(running.spec?.nodeName, 'the new Pod is scheduled')
        await waitForObject<PodService>(
          PODSERVICES,
          (o) =>
            o.status?.observedGeneration === o.metadata.generation &&
            o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
          'the PodService Ready True again with the new Pod'
        )
        const service = await get<Service>(SERVICES)
        assert.equal(service.metadata.uid, oldService.metadata.uid)
        assert.equal(service.metadata.resourceVersion, oldService.metadata.resourceVersion)
      })

      it('a new port updates the Service in place (same UID, new port)', async () => {
        const oldService = await get<Service>(SERVICES)
        await patchSpec({ port: 8080 })
        const service = await waitForObject<Service>(
          SERVICES,
          (s) => s.spec?.ports?.[0]?.port === 8080,
          'the Service on port 8080'
        )
        assert.equal(service.metadata.uid, oldService.metadata.uid)
        assert.equal(service.spec?.clusterIP, oldService.spec?.clusterIP)
        assert.deepEqual(service.spec?.ports, [
          { name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' },
        ])
        const pod = await waitForObject<Pod>(
          PODS,
          (p) => p.spec?.containers[0]?.ports?.[0]?.containerPort === 8080,
          'the Pod on port 8080'
        )
        assert.equal(pod.spec?.containers[0]?.image, 'nginx:1.27-alpine')
        await waitForObject<PodService>(
          PODSERVICES,
          (o) => o.status?.serviceAddress === `${service.spec?.clusterIP ?? ''}:8080`,
          'the status address on port 8080'
        )
      })

      it('takes quantities the API server rewrites without recreating the Pod again', async () => {
        await patchSpec({ cpuLimit: '0.2' })
        // Ready first: scheduling and the simulated kubelet write the new Pod too, legitimately.
        const pod = await waitForObject<Pod>(
          PODS,
          (p) =>
            p.spec?.containers[0]?.resources?.limits?.['cpu'] === '200m' &&
            p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
          'the Pod with a 200m CPU limit, Ready'
        )
        await new Promise((resolve) => setTimeout(resolve, 2000))
        const later = await get<Pod>(PODS)
        assert.equal(later.metadata.uid, pod.metadata.uid)
        assert.equal(later.metadata.resourceVersion, pod.metadata.resourceVersion)
      })

      it('refuses invalid specs at the API server, with its message', async () => {
        const generation = (await get<PodService>(PODSERVICES)).metadata.generation
        const refused = async (spec: Record<string, unknown>, message: RegExp): Promise<void> => {
          await assert.rejects(patchSpec(spec), (error: unknown) => {
            assert.ok(error instanceof InvalidError, String(error))
            assert.match(error.message, message)
            return true
          })
        }
        await refused(
          { port: 70000 },
          /spec\.port: Invalid value: 70000: spec\.port in body should be less than or equal to 65535/
        )
        await refused(
          { cpuReq: '300m' },
          /spec\.cpuReq: Invalid value: spec\.cpuReq \(300m\) must not be above spec\.cpuLimit \(0\.2\)/
        )
        await refused(
          { memLimit: 'lots' },
          /spec\.memLimit: Invalid value: "lots": must be a positive memory quantity/
        )
        await refused({ image: null }, /spec\.image: Required value/)
        assert.equal((await get<PodService>(PODSERVICES)).metadata.generation, generation)
        await assert.rejects(
          plane.client.create(PODSERVICES, {
            apiVersion: 'homelabz.com.br/v1',
            kind: 'PodService',
            metadata: { name: 'no-image', namespace: ns },
            spec: { port: 80 },
          }),
          (error: unknown) =>
            error instanceof InvalidError && error.message.includes('spec.image: Required value')
        )
      })

      it('spec.ingress adds an Ingress child, and removing it deletes the Ingress', async () => {
        await patchSpec({ ingress: { host: 'nginx.example.com', class: 'nginx' } })
        const ingress = await waitForObject<Ingress>(INGRESSES, () => true, 'Ingress nginx')
        assert.equal(ingress.spec?.ingressClassName, 'nginx')
        assert.deepEqual(ingress.spec.rules, [
          {
            host: 'nginx.example.com',
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: 'nginx', port: { number: 8080 } } },
                },
              ],
            },
          },
        ])
        await waitForObject<PodService>(
          PODSERVICES,
          (o) => o.status?.ingresses === 1,
          'status.ingresses 1'
        )
        await patchSpec({ ingress: null })
        await waitForGone(INGRESSES)
      })

      it('deleting the PodService garbage-collects its Pod and Service', async () => {
        const pod = await get<Pod>(PODS)
        assert.ok(pod.metadata.ownerReferences?.some((r) => r.kind === 'PodService'))
        await gcReady
        await plane.client.delete(PODSERVICES, 'nginx', { namespace: ns })
        await waitForGone(PODSERVICES)
        await waitForGone(PODS)
        await waitForGone(SERVICES)
      })
    })
  }
})
