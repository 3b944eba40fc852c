/**
 * The engine's readiness rule: every cache must have synced, except a cache whose list or watch
 * RBAC forbids. Such a cache belongs to the controllers that need the right (they cannot start,
 * and say so with a Warning `Forbidden` event); it is listed by `/readyz?verbose` but does not
 * make the Pod unready, so one controller lacking a right does not take the others' readiness
 * (and a rolling upgrade of the engine) down. The engine's own caches (CompositeControllers,
 * DecoratorControllers) always count.
 *
 * @module
 */
import type { RequestObserver } from '../../kube/kube-transport.js'
import type { ForbiddenCollection, ForbiddenRequests } from './forbidden-requests.js'
import { describeRight } from './forbidden-right.js'

/** What readiness needs of a cache. */
export interface CacheState {
  readonly description: string
  readonly synced: boolean
}

/** Tells whether an informer description is the forbidden collection's (selectors aside). */
function isOf(description: string, forbidden: ForbiddenCollection): boolean {
  const base = forbidden.collection
  return (
    description === base ||
    description.startsWith(`${base} (`) ||
    description.startsWith(`${base} [`)
  )
}

function forbiddenOf(
  cache: CacheState,
  forbidden: readonly ForbiddenCollection[]
): ForbiddenCollection | undefined {
  return cache.synced ? undefined : forbidden.find((f) => isOf(cache.description, f))
}

/** Why the engine is not ready: each unsynced cache, forbidden ones left out. */
export function notReadyCaches(
  caches: readonly CacheState[],
  forbidden: readonly ForbiddenCollection[]
): string[] {
  return caches
    .filter((c) => !c.synced && forbiddenOf(c, forbidden) === undefined)
    .map((c) => `${c.description} not synced`)
}

/** The unsynced caches readiness leaves out, each with the right and the controllers needing it. */
export function forbiddenCaches(
  caches: readonly CacheState[],
  forbidden: readonly ForbiddenCollection[]
): string[] {
  return caches.flatMap((c) => {
    const f = forbiddenOf(c, forbidden)
    if (f === undefined) return []
    const who = f.controllers.length === 0 ? 'no controller spec' : f.controllers.join(', ')
    return [
      `${c.description} not synced: forbidden to ${describeRight(f.right)} (needed by ${who})`,
    ]
  })
}

/** `next`, then the forbidden-request reporter, on every finished request. */
export function observeForbidden(
  next: RequestObserver,
  forbidden: ForbiddenRequests
): RequestObserver {
  return {
    onRequest: (info) => {
      next.onRequest(info)
      forbidden.onRequest(info)
    },
  }
}
