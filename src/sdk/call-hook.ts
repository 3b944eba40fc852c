import type { KubeObject } from '../core/kube-object.js'
import { hookCodec } from '../api/wire/codecs.js'
import type { CompositeHook, CompositeRequest, ObjectLike } from './hook-types.js'

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
