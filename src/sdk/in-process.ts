/**
 * Runs SDK hooks in-process in the engine: the same request JSON a v2 webhook would receive, and
 * the same response validation, without the HTTP hop.
 *
 * @module
 */
import type {
  CompositeSyncRequest,
  CompositeSyncResponse,
  CustomizeRequest,
  CustomizeResponse,
} from '../api/hook-model.js'
import type { KubeObject } from '../core/kube-object.js'
import { hookCodec } from '../api/wire/codecs.js'
import type {
  CompositeHook,
  CompositeRequest,
  CustomizeHook,
  CustomizeHookRequest,
  ObjectLike,
} from './hook-types.js'

/** Hook functions in the engine's internal model, as `Engine.addCompositeController` takes them. */
export interface EngineCompositeHooks {
  readonly sync?: (
    request: CompositeSyncRequest,
    signal: AbortSignal
  ) => Promise<CompositeSyncResponse>
  readonly finalize?: (
    request: CompositeSyncRequest,
    signal: AbortSignal
  ) => Promise<CompositeSyncResponse>
  readonly customize?: (
    request: CustomizeRequest,
    signal: AbortSignal
  ) => Promise<CustomizeResponse>
}

const codec = hookCodec('v2')

function adaptComposite(
  hook: CompositeHook,
  name: 'sync' | 'finalize'
): (request: CompositeSyncRequest, signal: AbortSignal) => Promise<CompositeSyncResponse> {
  return async (request) => {
    // A copy: the engine's objects are its cache, and a hook may change what it is given.
    const wire = structuredClone(codec.encodeCompositeSync(request)) as unknown as CompositeRequest
    const response = await hook(wire)
    // Decoded from JSON exactly as a webhook's answer, so in-process and webhook hooks cannot
    // drift apart in what they may return.
    return codec.decodeCompositeSync(JSON.stringify(response), { hook: name, mode: 'strict' })
      .response
  }
}

/**
 * Adapts SDK hooks for `Engine.addCompositeController`, so a controller defined in TypeScript
 * runs its hooks in the engine's process.
 *
 * @example
 * ```ts
 * await engine.addCompositeController({ name: 'podservice', spec, hooks: inProcessHooks({ sync }) })
 * ```
 */
export function inProcessHooks<
  Parent extends ObjectLike = KubeObject,
  Child extends ObjectLike = KubeObject,
  Status = Record<string, unknown>,
>(hooks: {
  readonly sync?: CompositeHook<Parent, Child, Status>
  readonly finalize?: CompositeHook<Parent, Child, Status>
  readonly customize?: CustomizeHook<Parent>
}): EngineCompositeHooks {
  // The author's types describe what the engine sends; at run time these are plain JSON.
  const sync = hooks.sync as unknown as CompositeHook | undefined
  const finalize = hooks.finalize as unknown as CompositeHook | undefined
  const customize = hooks.customize as unknown as CustomizeHook | undefined
  return {
    ...(sync === undefined ? {} : { sync: adaptComposite(sync, 'sync') }),
    ...(finalize === undefined ? {} : { finalize: adaptComposite(finalize, 'finalize') }),
    ...(customize === undefined
      ? {}
      : {
          customize: async (request: CustomizeRequest): Promise<CustomizeResponse> => {
            const wire = structuredClone(
              codec.encodeCustomize(request)
            ) as unknown as CustomizeHookRequest
            const response = await customize(wire)
            return codec.decodeCustomize(JSON.stringify(response), { mode: 'strict' }).response
          },
        }),
  }
}
