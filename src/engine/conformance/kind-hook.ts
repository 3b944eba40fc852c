/**
 * The one way a conformance adapter turns a kind-neutral {@link ConformanceHook} into its kind's
 * hook: the adapter says where its request keeps the subject and the observed objects, and how
 * its response carries the answer.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import type { HookFunction, ObjectsByType } from '../../api/hook-model.js'
import type { ConformanceAnswer, ConformanceHook } from './conformance-harness.js'

/** What a kind's hook request holds, as the conformance suite reads it. */
export interface KindHookRequest {
  readonly subject: KubeObject
  readonly observed: ObjectsByType
  readonly finalizing: boolean
}

/** Every observed object, in type then key order. */
export function observedInOrder(observed: ObjectsByType): KubeObject[] {
  return [...observed.keys()]
    .sort()
    .flatMap((type) => [...(observed.get(type)?.entries() ?? [])])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, object]) => object)
}

/**
 * Wraps a kind-neutral hook as a sync or finalize hook of one kind: `read` finds the subject and
 * observed objects in the kind's request, `write` puts the answer into the kind's response.
 */
export function kindHook<Request, Response>(
  hook: ConformanceHook,
  read: (request: Request) => KindHookRequest,
  write: (answer: ConformanceAnswer) => Response
): HookFunction<Request, Response> {
  return async (request) => {
    const { subject, observed, finalizing } = read(request)
    return write(await hook({ subject, observed: observedInOrder(observed), finalizing }))
  }
}
