import type { KubeObject } from '../core/kube-object.js'
import { hookCodec } from '../api/wire/codecs.js'
import type {
  CompositeHook,
  CompositeRequest,
  DecoratorHook,
  DecoratorRequest,
  ObjectLike,
} from './hook-types.js'

/** A composite hook's answer after the engine's validation. */
export interface CheckedCompositeResponse<
  Child extends ObjectLike = KubeObject,
  Status = Record<string, unknown>,
> {
  readonly status: Status | null
  readonly children: readonly Child[]
  readonly resyncAfterSeconds: number
  readonly finalized: boolean
}

/** The parts of a request a test gives; the rest gets empty defaults. */
export interface CompositeFixture<Parent extends ObjectLike, Child extends ObjectLike> {
  readonly parent: Parent
  readonly children?: CompositeRequest<Parent, Child>['children']
  readonly related?: CompositeRequest['related']
  readonly controller?: KubeObject
  readonly finalizing?: boolean
}

/**
 * Calls a composite hook with a fixture request, no HTTP, and validates its answer exactly as
 * the engine would (strict decoding: unknown fields, wrong types and objects without kind or
 * apiVersion fail).
 *
 * @example
 * ```ts
 * const out = await callCompositeHook(sync, { parent: samplePodService })
 * assert.equal(out.children.length, 2)
 * ```
 */
export async function callCompositeHook<
  Parent extends ObjectLike,
  Child extends ObjectLike,
  Status = Record<string, unknown>,
>(
  hook: CompositeHook<Parent, Child, Status>,
  fixture: CompositeFixture<Parent, Child>
): Promise<CheckedCompositeResponse<Child, Status>> {
  const request: CompositeRequest<Parent, Child> = {
    controller: fixture.controller ?? {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: 'test' },
      spec: {},
      status: {},
    },
    parent: fixture.parent,
    children: fixture.children ?? {},
    related: fixture.related ?? {},
    finalizing: fixture.finalizing ?? false,
  }
  const response = await hook(structuredClone(request))
  const decoded = hookCodec('v2').decodeCompositeSync(JSON.stringify(response), {
    hook: request.finalizing ? 'finalize' : 'sync',
    mode: 'strict',
  }).response
  return {
    status: decoded.status as Status | null,
    children: decoded.children as unknown as readonly Child[],
    resyncAfterSeconds: decoded.resyncAfterMs / 1000,
    finalized: decoded.finalized,
  }
}

/** A decorator hook's answer after the engine's validation. */
export interface CheckedDecoratorResponse<
  Attachment extends KubeObject = KubeObject,
  Status = Record<string, unknown>,
> {
  /** Label updates for the target: a string sets the key, null removes it. */
  readonly labels: Readonly<Record<string, string | null>>
  /** Annotation updates for the target: a string sets the key, null removes it. */
  readonly annotations: Readonly<Record<string, string | null>>
  /** The target's new status; null leaves it unchanged. */
  readonly status: Status | null
  readonly attachments: readonly Attachment[]
  readonly resyncAfterSeconds: number
  readonly finalized: boolean
}

/** The parts of a decorator request a test gives; the rest gets empty defaults. */
export interface DecoratorFixture<Target extends KubeObject, Attachment extends KubeObject> {
  /** The decorated object (`object` in the request). */
  readonly object: Target
  readonly attachments?: DecoratorRequest<Target, Attachment>['attachments']
  readonly related?: DecoratorRequest['related']
  readonly controller?: KubeObject
  readonly finalizing?: boolean
}

/**
 * Calls a DecoratorController sync or finalize hook with a fixture request, no HTTP, and
 * validates its answer exactly as the engine would (strict decoding, as for a v2 webhook or an
 * in-process hook: unknown fields, label values that are not strings or null, and attachments
 * without kind or apiVersion fail).
 *
 * @example
 * ```ts
 * const out = await callDecoratorHook(sync, { object: samplePodService })
 * assert.equal(out.labels['example.com/decorated'], 'true')
 * assert.equal(out.attachments.length, 1)
 * ```
 */
export async function callDecoratorHook<
  Target extends KubeObject,
  Attachment extends KubeObject,
  Status = Record<string, unknown>,
>(
  hook: DecoratorHook<Target, Attachment, Status>,
  fixture: DecoratorFixture<Target, Attachment>
): Promise<CheckedDecoratorResponse<Attachment, Status>> {
  const request: DecoratorRequest<Target, Attachment> = {
    controller: fixture.controller ?? {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'DecoratorController',
      metadata: { name: 'test' },
      spec: {},
      status: {},
    },
    object: fixture.object,
    attachments: fixture.attachments ?? {},
    related: fixture.related ?? {},
    finalizing: fixture.finalizing ?? false,
  }
  const response = await hook(structuredClone(request))
  const decoded = hookCodec('v2').decodeDecoratorSync(JSON.stringify(response), {
    hook: request.finalizing ? 'finalize' : 'sync',
    mode: 'strict',
  }).response
  return {
    labels: decoded.labels,
    annotations: decoded.annotations,
    status: decoded.status as Status | null,
    attachments: decoded.attachments as readonly Attachment[],
    resyncAfterSeconds: decoded.resyncAfterMs / 1000,
    finalized: decoded.finalized,
  }
}
