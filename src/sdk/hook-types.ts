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

/** Observed objects by type (`Kind.apiVersion`, e.g. `Pod.v1`), then by object key. */
export type ObjectMap<T extends KubeObject = KubeObject> = Record<string, Record<string, T>>

/** A CompositeController sync or finalize request. */
export interface CompositeRequest<
  Parent extends KubeObject = KubeObject,
  Child extends KubeObject = KubeObject,
> {
  /** The CompositeController. */
  readonly controller: KubeObject
  readonly parent: Parent
  /** One entry for every declared child type, even when empty. */
  readonly children: ObjectMap<Child>
  /** Related objects selected by the customize hook. */
  readonly related: ObjectMap
  /** True when the finalize hook is being called (the parent is going away). */
  readonly finalizing: boolean
}

/** What a CompositeController sync or finalize hook returns. */
export interface CompositeResponse<
  Child extends KubeObject = KubeObject,
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
  Target extends KubeObject = KubeObject,
  Attachment extends KubeObject = KubeObject,
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
  Attachment extends KubeObject = KubeObject,
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
export interface CustomizeHookRequest<Parent extends KubeObject = KubeObject> {
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
  Parent extends KubeObject = KubeObject,
  Child extends KubeObject = KubeObject,
  Status = Record<string, unknown>,
> = Hook<CompositeRequest<Parent, Child>, CompositeResponse<Child, Status>>

/** A DecoratorController sync or finalize hook. */
export type DecoratorHook<
  Target extends KubeObject = KubeObject,
  Attachment extends KubeObject = KubeObject,
  Status = Record<string, unknown>,
> = Hook<DecoratorRequest<Target, Attachment>, DecoratorResponse<Attachment, Status>>

/** A customize hook. */
export type CustomizeHook<Parent extends KubeObject = KubeObject> = Hook<
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
  Parent extends KubeObject = KubeObject,
  Child extends KubeObject = KubeObject,
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
  Target extends KubeObject = KubeObject,
  Attachment extends KubeObject = KubeObject,
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
export function defineCustomizeHook<Parent extends KubeObject = KubeObject>(
  hook: CustomizeHook<Parent>
): CustomizeHook<Parent> {
  return hook
}
