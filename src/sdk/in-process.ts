/**
 * Runs SDK hooks in-process in the engine: the same request JSON a v2 webhook would receive, and
 * the same response validation, without the HTTP hop.
 *
 * @module
 */
import type { CompositeHooks, DecoratorHooks, SyncHooks } from '../api/controller-hooks.js'
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
  CustomizeHook,
  CustomizeHookRequest,
  DecoratorHook,
  ObjectLike,
} from './hook-types.js'

/** Hook functions in the engine's internal model, as `Engine.addCompositeController` takes them. */
export type EngineCompositeHooks = Omit<CompositeHooks, 'close'>

/** Hook functions in the engine's internal model, as `Engine.addDecoratorController` takes them. */
export type EngineDecoratorHooks = Omit<DecoratorHooks, 'close'>

const codec = hookCodec('v2')

/** How one controller kind's sync and finalize requests cross to a hook and back. */
interface InProcessKind<Request, Response> {
  encode(request: Request): unknown
  decode(text: string, hook: 'sync' | 'finalize'): Response
}

const COMPOSITE: InProcessKind<CompositeSyncRequest, CompositeSyncResponse> = {
  encode: (request) => codec.encodeCompositeSync(request),
  decode: (text, hook) => codec.decodeCompositeSync(text, { hook, mode: 'strict' }).response,
}

const DECORATOR: InProcessKind<DecoratorSyncRequest, DecoratorSyncResponse> = {
  encode: (request) => codec.encodeDecoratorSync(request),
  decode: (text, hook) => codec.decodeDecoratorSync(text, { hook, mode: 'strict' }).response,
}

function adapt<Request, Response>(
  kind: InProcessKind<Request, Response>,
  hook: (request: never) => unknown,
  name: 'sync' | 'finalize'
): HookFunction<Request, Response> {
  return async (request) => {
    // A copy: the engine's objects are its cache, and a hook may change what it is given.
    const wire = structuredClone(kind.encode(request)) as never
    const response = await hook(wire)
    // Decoded from JSON exactly as a webhook's answer, so in-process and webhook hooks cannot
    // drift apart in what they may return.
    return kind.decode(JSON.stringify(response), name)
  }
}

function adaptCustomize(hook: CustomizeHook): HookFunction<CustomizeRequest, CustomizeResponse> {
  return async (request) => {
    const wire = structuredClone(codec.encodeCustomize(request)) as unknown as CustomizeHookRequest
    const response = await hook(wire)
    return codec.decodeCustomize(JSON.stringify(response), { mode: 'strict' }).response
  }
}

/** A controller's hook functions as an author writes them, of either kind. */
export interface AuthoredHooks {
  readonly sync?: (request: never) => unknown
  readonly finalize?: (request: never) => unknown
  readonly customize?: (request: never) => unknown
}

/** The one adapter of both kinds: each given hook wrapped for the engine. */
function adaptHooks<Request, Response>(
  kind: InProcessKind<Request, Response>,
  hooks: AuthoredHooks
): SyncHooks<Request, Response> & {
  customize?: HookFunction<CustomizeRequest, CustomizeResponse>
} {
  const { sync, finalize, customize } = hooks
  return {
    ...(sync === undefined ? {} : { sync: adapt(kind, sync, 'sync') }),
    ...(finalize === undefined ? {} : { finalize: adapt(kind, finalize, 'finalize') }),
    // The author's types describe what the engine sends; at run time these are plain JSON.
    ...(customize === undefined
      ? {}
      : { customize: adaptCustomize(customize as unknown as CustomizeHook) }),
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
  return adaptHooks(COMPOSITE, hooks)
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
  return adaptHooks(DECORATOR, hooks)
}

/**
 * Adapts a controller's hooks, as a module exports them (`metactl dev`, `metactl render
 * --hook-module`), for the engine of its kind: the one adapter of both kinds.
 */
export function inProcessHooksOf(
  kind: 'CompositeController',
  hooks: AuthoredHooks
): EngineCompositeHooks
export function inProcessHooksOf(
  kind: 'DecoratorController',
  hooks: AuthoredHooks
): EngineDecoratorHooks
export function inProcessHooksOf(
  kind: 'CompositeController' | 'DecoratorController',
  hooks: AuthoredHooks
): EngineCompositeHooks | EngineDecoratorHooks {
  return kind === 'CompositeController'
    ? adaptHooks(COMPOSITE, hooks)
    : adaptHooks(DECORATOR, hooks)
}
