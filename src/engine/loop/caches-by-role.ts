/**
 * Looks a kind's caches up by the role it gave each watched source, so a sync names what it
 * reads (a child rule, the revisions) instead of counting positions in the source list.
 *
 * @module
 */
import type { ObjectReader } from '../../runtime/informers/object-store.js'
import type { ControllerCaches } from './parent-controller.js'

/**
 * Pairs each source's role with the cache the loop made for it: the loop keeps one cache per
 * source, in the order the sources were declared.
 */
export function cachesByRole<Role extends string>(
  sources: readonly { readonly role: Role }[],
  caches: ControllerCaches['children']
): Map<Role, ObjectReader> {
  const byRole = new Map<Role, ObjectReader>()
  sources.forEach((source, index) => {
    const store = caches[index]?.store
    if (store !== undefined) byRole.set(source.role, store)
  })
  return byRole
}
