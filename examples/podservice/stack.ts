/**
 * Runs the PodService controller against a cluster from this process, for the demo
 * (`make demo`), `make run` and the end-to-end test: the engine in-process, and the hook either
 * served as a webhook (the CompositeController from controller.yaml, its URL rewritten) or
 * called in-process (`Engine.addCompositeController`).
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { KubeObject } from 'metacontroller-ts'
import { Engine } from 'metacontroller-ts/engine'
import type { EngineOptions } from 'metacontroller-ts/engine'
import { AlreadyExistsError, NotFoundError } from 'metacontroller-ts/kube'
import type { ClusterConfig, DynamicClient, ResourceRef } from 'metacontroller-ts/kube'
import { serveHooks } from 'metacontroller-ts'
import type { HookServer } from 'metacontroller-ts'
import { readManifestFile, waitFor } from 'metacontroller-ts/testing'
import { CONTROLLER_NAME, podServiceController, sync } from './hook.js'
import type { PodService } from './hook.js'
import { COMPOSITE_CONTROLLERS } from 'metacontroller-ts/kube'
export {
  COMPOSITE_CONTROLLERS,
  INGRESSES,
  NAMESPACES,
  PODS,
  SERVICES,
} from 'metacontroller-ts/kube'

/** This directory. */
export const EXAMPLE_DIR: string = fileURLToPath(new URL('.', import.meta.url))
const REPO_ROOT = join(EXAMPLE_DIR, '..', '..')

/** The manifests of the example. */
export const MANIFESTS = {
  crd: join(EXAMPLE_DIR, 'crd.yaml'),
  controller: join(EXAMPLE_DIR, 'controller.yaml'),
  controllerInCluster: join(EXAMPLE_DIR, 'controller-in-cluster.yaml'),
  sample: join(EXAMPLE_DIR, 'sample.yaml'),
} as const

/** The Metacontroller CRDs (`deploy/crds/*.yaml`, without the kustomization). */
export function metacontrollerCrdFiles(): string[] {
  const dir = join(REPO_ROOT, 'deploy', 'crds')
  return readdirSync(dir)
    .filter((name) => name.endsWith('.yaml') && name !== 'kustomization.yaml')
    .sort()
    .map((name) => join(dir, name))
}

export const PODSERVICES: ResourceRef = {
  group: 'homelabz.com.br',
  version: 'v1',
  resource: 'podservices',
  namespaced: true,
}

/** How the engine reaches the hook. */
export type HookMode = 'webhook' | 'in-process'

/** The CompositeController of controller.yaml, calling the hook at `url`. */
export function compositeControllerFor(url: string): KubeObject {
  const [controller] = readManifestFile(MANIFESTS.controller)
  if (controller === undefined) throw new Error(`${MANIFESTS.controller} has no object`)
  const spec = controller['spec'] as { hooks: { sync: { webhook: Record<string, unknown> } } }
  spec.hooks.sync.webhook = { url }
  return controller
}

/** The objects of sample.yaml: the Namespace and the PodService, optionally in `namespace`. */
export function loadSample(namespace?: string): { namespace: KubeObject; podService: PodService } {
  const objects = readManifestFile(MANIFESTS.sample)
  const ns = objects.find((o) => o.kind === 'Namespace')
  const podService = objects.find((o) => o.kind === 'PodService') as PodService | undefined
  if (ns === undefined || podService === undefined) {
    throw new Error(`${MANIFESTS.sample} must hold a Namespace and a PodService`)
  }
  if (namespace !== undefined) {
    ns.metadata.name = namespace
    podService.metadata.namespace = namespace
  }
  return { namespace: ns, podService }
}

/** Creates an object, or replaces it when it exists. */
export async function createOrReplace(
  client: DynamicClient,
  ref: ResourceRef,
  object: KubeObject
): Promise<KubeObject> {
  try {
    return await client.create(ref, object)
  } catch (error) {
    if (!(error instanceof AlreadyExistsError)) throw error
    const name = object.metadata.name ?? ''
    const ns = object.metadata.namespace
    const current = await client.get(ref, name, ns === undefined ? {} : { namespace: ns })
    return client.update(ref, {
      ...object,
      metadata: { ...object.metadata, resourceVersion: current.metadata.resourceVersion ?? '' },
    })
  }
}

/** The running engine and hook. */
export interface PodServiceStack {
  readonly mode: HookMode
  readonly engine: Engine
  /** The webhook's URL (webhook mode). */
  readonly hookUrl?: string
  /** Stops the engine, removes the CompositeController it served, and closes the hook. */
  stop(): Promise<void>
}

/** Label on the CompositeController this stack creates; the engine serves only that one. */
export const STACK_LABEL = 'podservice.homelabz.com.br/stack'

/**
 * Starts the engine in-process and the PodService controller on it; resolves once the
 * controller runs.
 *
 * @remarks
 * In webhook mode the engine serves only the CompositeController this call creates (by label),
 * so other controllers in a shared cluster are left to their own engines.
 */
export async function startPodServiceStack(
  config: ClusterConfig,
  client: DynamicClient,
  mode: HookMode,
  options: EngineOptions = {}
): Promise<PodServiceStack> {
  if (mode === 'in-process') {
    const engine = new Engine(config, {
      discoveryIntervalMs: 500,
      ...options,
      watchCompositeControllers: false,
    })
    try {
      await engine.start()
      await engine.addCompositeController(podServiceController)
    } catch (error) {
      await engine.stop()
      throw error
    }
    return { mode, engine, stop: () => engine.stop() }
  }

  const stackId = randomBytes(4).toString('hex')
  let hook: HookServer | undefined
  let engine: Engine | undefined
  let created = false
  const stop = async (): Promise<void> => {
    await engine?.stop()
    if (created) {
      await client.delete(COMPOSITE_CONTROLLERS, CONTROLLER_NAME).catch((error: unknown) => {
        if (!(error instanceof NotFoundError)) throw error
      })
    }
    await hook?.close()
  }
  try {
    hook = await serveHooks({ '/sync': sync }, { port: 0, host: '127.0.0.1' })
    engine = new Engine(config, {
      discoveryIntervalMs: 500,
      ...options,
      watchCompositeControllers: true,
      targetLabelSelector: `${STACK_LABEL}=${stackId}`,
    })
    await engine.start()
    const controller = compositeControllerFor(`${hook.url}/sync`)
    controller.metadata.labels = { ...controller.metadata.labels, [STACK_LABEL]: stackId }
    await createOrReplace(client, COMPOSITE_CONTROLLERS, controller)
    created = true
    const running = engine
    await waitFor(() => running.runningControllers().includes(CONTROLLER_NAME), {
      timeoutMs: 30_000,
      intervalMs: 100,
      description: `the engine to start CompositeController ${CONTROLLER_NAME}`,
    })
  } catch (error) {
    await stop()
    throw error
  }
  return { mode, engine, hookUrl: `${hook.url}/sync`, stop }
}
