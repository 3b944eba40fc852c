/**
 * Runs the NetworkPolicy decorator against a cluster from this process, for the end-to-end test
 * and `make demo`: an engine in-process, and the hook either served as a webhook (the
 * DecoratorController of decorator.yaml, its URL rewritten) or called in-process
 * (`Engine.addDecoratorController`).
 *
 * @remarks
 * The decorator gets an engine of its own, next to the PodService controller's, so that either
 * can be started and stopped alone.
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import type { KubeObject } from 'metacontroller-ts'
import { Engine } from 'metacontroller-ts/engine'
import type { EngineOptions } from 'metacontroller-ts/engine'
import { NotFoundError } from 'metacontroller-ts/kube'
import type { ClusterConfig, DynamicClient, ResourceRef } from 'metacontroller-ts/kube'
import { DECORATOR_CONTROLLERS } from 'metacontroller-ts/kube'
import { serveHooks } from 'metacontroller-ts'
import type { HookServer } from 'metacontroller-ts'
import { readManifestFile, waitFor } from 'metacontroller-ts/testing'
import { createOrReplace } from '../podservice/stack.js'
import type { HookMode } from '../podservice/stack.js'
import { DECORATOR_NAME, netpolDecorator, sync } from './hook.js'

/** The DecoratorController manifest, calling the hook on 127.0.0.1:8082. */
export const DECORATOR_MANIFEST: string = join(
  fileURLToPath(new URL('.', import.meta.url)),
  'decorator.yaml'
)

/** NetworkPolicies (`networking.k8s.io/v1`). */
export const NETWORK_POLICIES: ResourceRef = {
  group: 'networking.k8s.io',
  version: 'v1',
  resource: 'networkpolicies',
  namespaced: true,
}

/** Label on the DecoratorController this stack creates; its engine serves only that one. */
export const NETPOL_STACK_LABEL = 'netpol.homelabz.com.br/stack'

/** The DecoratorController of decorator.yaml, calling the hook at `url`. */
export function decoratorControllerFor(url: string): KubeObject {
  const [controller] = readManifestFile(DECORATOR_MANIFEST)
  if (controller === undefined) throw new Error(`${DECORATOR_MANIFEST} has no object`)
  const spec = controller['spec'] as { hooks: { sync: { webhook: Record<string, unknown> } } }
  spec.hooks.sync.webhook = { url }
  return controller
}

/** The running decorator. */
export interface NetpolDecoratorStack {
  readonly mode: HookMode
  readonly engine: Engine
  /** The webhook's URL (webhook mode). */
  readonly hookUrl?: string
  /** Stops the engine, removes the DecoratorController it served, and closes the hook. */
  stop(): Promise<void>
}

/**
 * Starts an engine in-process and the decorator on it; resolves once the decorator runs.
 *
 * @remarks
 * In webhook mode the engine serves only the DecoratorController this call creates (by label),
 * so controllers that other engines serve in a shared cluster are left alone.
 */
export async function startNetpolDecorator(
  config: ClusterConfig,
  client: DynamicClient,
  mode: HookMode,
  options: EngineOptions = {}
): Promise<NetpolDecoratorStack> {
  const base = { discoveryIntervalMs: 500, ...options, watchCompositeControllers: false }
  if (mode === 'in-process') {
    const engine = new Engine(config, { ...base, watchDecoratorControllers: false })
    try {
      await engine.start()
      await engine.addDecoratorController(netpolDecorator)
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
      await client.delete(DECORATOR_CONTROLLERS, DECORATOR_NAME).catch((error: unknown) => {
        if (!(error instanceof NotFoundError)) throw error
      })
    }
    await hook?.close()
  }
  try {
    hook = await serveHooks({ '/sync': sync }, { port: 0, host: '127.0.0.1' })
    engine = new Engine(config, {
      ...base,
      watchDecoratorControllers: true,
      targetLabelSelector: `${NETPOL_STACK_LABEL}=${stackId}`,
    })
    await engine.start()
    const controller = decoratorControllerFor(`${hook.url}/sync`)
    controller.metadata.labels = { ...controller.metadata.labels, [NETPOL_STACK_LABEL]: stackId }
    await createOrReplace(client, DECORATOR_CONTROLLERS, controller)
    created = true
    const running = engine
    await waitFor(() => running.runningControllers().includes(DECORATOR_NAME), {
      timeoutMs: 30_000,
      intervalMs: 100,
      description: `the engine to start DecoratorController ${DECORATOR_NAME}`,
    })
  } catch (error) {
    await stop()
    throw error
  }
  return { mode, engine, hookUrl: `${hook.url}/sync`, stop }
}
