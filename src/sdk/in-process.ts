/**
 * Runs SDK hooks in-process in the engine: the same request JSON a v2 webhook would receive, and
 * the same response validation, without the HTTP hop.
 *
 * @module
 */
import type { CompositeHooks, DecoratorHooks } from '../api/controller-hooks.js'
import type {
  CompositeSyncRequest,
  CompositeSyncResponse,
  CustomizeRequest,
  CustomizeResponse,
  DecoratorSyncRequest,
  DecoratorSyncResponse,
  HookFunction,
} from '../api/hook-model.js'
import type { KubeObject } from '../core/kube-object.js'
import { hookCodec } from '../api/wire/codecs.js'
import type {
  CompositeHook,
  CompositeRequest,
  CustomizeHook,
  CustomizeHookRequest,
  DecoratorHook,
  DecoratorRequest,
  ObjectLike,
} from './hook-types.js'

/** Hook functions in the engine's internal model, as `Engine.addCompositeController` takes them. */
export type EngineCompositeHooks = Omit<CompositeHooks, 'close'>

/** Hook functions in the engine's internal model, as `Engine.addDecoratorController` takes them. */
export type EngineDecoratorHooks = Omit<DecoratorHooks, 'close'>

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
    ...(customize === undefined ? {} : { customize: adaptCustomize(customize) }),
  }
}

function adaptCustomize(hook: CustomizeHook): HookFunction<CustomizeRequest, CustomizeResponse> {
  return async (request) => {
    const wire = structuredClone(codec.encodeCustomize(request)) as unknown as CustomizeHookRequest
    const response = await hook(wire)
    return codec.decodeCustomize(JSON.stringify(response), { mode: 'strict' }).response
  }
}

function adaptDecorator(
  hook: DecoratorHook,
  name: 'sync' | 'finalize'
): HookFunction<DecoratorSyncRequest, DecoratorSyncResponse> {
  return async (request) => {
    // Copied and strictly decoded for the same reasons as a composite hook (see adaptComposite).
    const wire = structuredClone(codec.encodeDecoratorSync(request)) as unknown as DecoratorRequest
    const response = await hook(wire)
    return codec.decodeDecoratorSync(JSON.stringify(response), { hook: name, mode: 'strict' })
      .response
  }
}

/**
 * Adapts SDK hooks for `Engine.addDecoratorController`, so a DecoratorController defined in
 * TypeScript runs its hooks in the engine's process.
 *
 * @remarks
 * The hook receives the JSON a v2 webhook would receive (`object`, `attachments` and `related`
 * keyed `namespace/name`), a copy it may change; its answer is decoded strictly, exactly as a v2
 * webhook's answer, so a hook behaves the same served with `serveHooks` or in-process.
 *
 * @example
 * ```ts
 * const sync = defineDecoratorHook(({ object }) => ({ labels: { decorated: 'true' } }))
 * await engine.addDecoratorController({ name: 'labeler', spec, hooks: inProcessDecoratorHooks({ sync }) })
 * ```
 */
export function inProcessDecoratorHooks<
  Target extends ObjectLike = KubeObject,
  Attachment extends ObjectLike = KubeObject,
  Status = Record<string, unknown>,
>(hooks: {
  readonly sync?: DecoratorHook<Target, Attachment, Status>
  readonly finalize?: DecoratorHook<Target, Attachment, Status>
  readonly customize?: CustomizeHook<Target>
}): EngineDecoratorHooks {
  // The author's types describe what the engine sends; at run time these are plain JSON.
  const sync = hooks.sync as unknown as DecoratorHook | undefined
  const finalize = hooks.finalize as unknown as DecoratorHook | undefined
  const customize = hooks.customize as unknown as CustomizeHook | undefined
  return {
    ...(sync === undefined ? {} : { sync: adaptDecorator(sync, 'sync') }),
    ...(finalize === undefined ? {} : { finalize: adaptDecorator(finalize, 'finalize') }),
    ...(customize === undefined ? {} : { customize: adaptCustomize(customize) }),
  }
}
