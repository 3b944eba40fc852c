/**
 * The hook request and response types hook authors write against: the JSON Metacontroller sends
 * and expects, with the parent, children and status typed by the author.
 *
 * @remarks
 * Requests use v2 object maps (`namespace/name` keys for namespaced objects) when a hook runs
 * in-process; a webhook receives whatever version its controller declares (`hooks.sync.version`).
 * Responses are validated exactly as the engine validates a webhook's answer.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import type { RelatedResourceRule } from '../api/hook-model.js'

/**
 * Anything shaped like a Kubernetes object: a {@link KubeObject}, a `kubernetes-types` object
 * such as `Pod` (whose fields are all optional), or an author's own interface.
 */
export interface ObjectLike {
  readonly apiVersion?: string
  readonly kind?: string
  readonly metadata?: {
    readonly name?: string
    readonly namespace?: string
    readonly uid?: string
    readonly labels?: Readonly<Record<string, string>>
    readonly annotations?: Readonly<Record<string, string>>
  }
}

/** Observed objects by type (`Kind.apiVersion`, e.g. `Pod.v1`), then by object key. */
export type ObjectMap<T extends ObjectLike = KubeObject> = Record<string, Record<string, T>>

/**
 * The key the engine files an object type under, `Kind.apiVersion` (`Deployment.apps/v1`), when
 * the type has literal `kind` and `apiVersion` (every `kubernetes-types` object does); otherwise
 * any such key.
 */
export type TypeKeyOf<T> = T extends {
  readonly kind?: infer Kind extends string
  readonly apiVersion?: infer Version extends string
}
  ? `${Kind}.${Version}`
  : `${string}.${string}`

/**
 * Observed children, keyed by type, each entry typed by its own child type: with
 * `Child = Pod | Service`, `children['Pod.v1']` holds Pods and `children['Service.v1']` Services.
 *
 * @remarks
 * The engine sends an entry (maybe empty) for every child type the controller declares; the
 * entries are optional here so that a hook still type-checks against a hand-written fixture.
 */
export type ChildrenMap<Child extends ObjectLike = KubeObject> = {
  readonly [C in Child as TypeKeyOf<C>]?: Readonly<Record<string, C>>
}

/** A CompositeController sync or finalize request. */
export interface CompositeRequest<
  Parent extends ObjectLike = KubeObject,
  Child extends ObjectLike = KubeObject,
> {
  /** The CompositeController. */
  readonly controller: KubeObject
  readonly parent: Parent
  /** One entry for every declared child type, even when empty, typed by child type. */
  readonly children: ChildrenMap<Child>
  /** Related objects selected by the customize hook. */
  readonly related: ObjectMap
  /** True when the finalize hook is being called (the parent is going away). */
  readonly finalizing: boolean
}

/** What a CompositeController sync or finalize hook returns. */
export interface CompositeResponse<
  Child extends ObjectLike = KubeObject,
  Status = Record<string, unknown>,
> {
  /** Replaces the parent's status (the engine adds `observedGeneration`). */
  readonly status?: Status | null
  /** Every desired child; children not listed are deleted. */
  readonly children?: readonly Child[] | null
  /** Asks for another sync after this many seconds. */
  readonly resyncAfterSeconds?: number
  /** Finalize hooks: true when cleanup is done and the parent may go. */
  readonly finalized?: boolean
}

/** A DecoratorController sync or finalize request. */
export interface DecoratorRequest<
  Target extends ObjectLike = KubeObject,
  Attachment extends ObjectLike = KubeObject,
> {
  readonly controller: KubeObject
  /** The decorated object. */
  readonly object: Target
  readonly attachments: ObjectMap<Attachment>
  readonly related: ObjectMap
  readonly finalizing: boolean
}

/** What a DecoratorController sync or finalize hook returns. */
export interface DecoratorResponse<
  Attachment extends ObjectLike = KubeObject,
  Status = Record<string, unknown>,
> {
  /** Labels to set (a string) or remove (null) on the target; others are untouched. */
  readonly labels?: Readonly<Record<string, string | null>>
  /** Annotations to set (a string) or remove (null) on the target. */
  readonly annotations?: Readonly<Record<string, string | null>>
  /** Replaces the target's status; null or absent leaves it alone. */
  readonly status?: Status | null
  readonly attachments?: readonly Attachment[] | null
  readonly resyncAfterSeconds?: number
  readonly finalized?: boolean
}

/** A customize request. */
export interface CustomizeHookRequest<Parent extends ObjectLike = KubeObject> {
  readonly controller: KubeObject
  readonly parent: Parent
}

/** What a customize hook returns: which related objects the sync hook should see. */
export interface CustomizeHookResponse {
  readonly relatedResources: readonly RelatedResourceRule[]
}

/** A hook: one request in, one response out, synchronous or not. */
export type Hook<Request, Response> = (request: Request) => Response | Promise<Response>

/** A CompositeController sync or finalize hook. */
export type CompositeHook<
  Parent extends ObjectLike = KubeObject,
  Child extends ObjectLike = KubeObject,
  Status = Record<string, unknown>,
> = Hook<CompositeRequest<Parent, Child>, CompositeResponse<Child, Status>>

/** A DecoratorController sync or finalize hook. */
export type DecoratorHook<
  Target extends ObjectLike = KubeObject,
  Attachment extends ObjectLike = KubeObject,
  Status = Record<string, unknown>,
> = Hook<DecoratorRequest<Target, Attachment>, DecoratorResponse<Attachment, Status>>

/** A customize hook. */
export type CustomizeHook<Parent extends ObjectLike = KubeObject> = Hook<
  CustomizeHookRequest<Parent>,
  CustomizeHookResponse
>

/**
 * Declares a CompositeController sync or finalize hook with typed parent, children and status.
 *
 * @example
 * ```ts
 * const sync = defineCompositeHook<PodService, Pod | Service, PodServiceStatus>(({ parent }) => ({
 *   status: { pods: 1, services: 1 },
 *   children: [podFor(parent), serviceFor(parent)],
 * }))
 * ```
 */
export function defineCompositeHook<
  Parent extends ObjectLike = KubeObject,
  Child extends ObjectLike = KubeObject,
  Status = Record<string, unknown>,
>(hook: CompositeHook<Parent, Child, Status>): CompositeHook<Parent, Child, Status> {
  return hook
}

/**
 * Declares a DecoratorController sync or finalize hook with typed target, attachments and status.
 *
 * @example
 * ```ts
 * const sync = defineDecoratorHook(({ object }) => ({ labels: { decorated: 'true' } }))
 * ```
 */
export function defineDecoratorHook<
  Target extends ObjectLike = KubeObject,
  Attachment extends ObjectLike = KubeObject,
  Status = Record<string, unknown>,
>(hook: DecoratorHook<Target, Attachment, Status>): DecoratorHook<Target, Attachment, Status> {
  return hook
}

/**
 * Declares a customize hook.
 *
 * @example
 * ```ts
 * const customize = defineCustomizeHook(({ parent }) => ({
 *   relatedResources: [{ apiVersion: 'v1', resource: 'configmaps', names: ['settings'] }],
 * }))
 * ```
 */
export function defineCustomizeHook<Parent extends ObjectLike = KubeObject>(
  hook: CustomizeHook<Parent>
): CustomizeHook<Parent> {
  return hook
}
