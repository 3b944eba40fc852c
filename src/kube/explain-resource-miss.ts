/**
 * Why a kind or resource was not found in a discovery snapshot, in words a user can act on.
 *
 * @module
 */
import { parseApiVersion } from './resource-map.js'
import type { ResourceMap } from './resource-map.js'

/**
 * Says why `snapshot` has no such kind or resource (`by`) in `apiVersion`: a malformed version,
 * an unknown group or version, stale discovery, or what the version does serve.
 */
export function explainResourceMiss(
  snapshot: ResourceMap,
  apiVersion: string,
  by: 'kind' | 'resource'
): string | undefined {
  const parsed = parseApiVersion(apiVersion)
  if (parsed === undefined) return 'the apiVersion is malformed: expected "v1" or "group/version"'
  const group = snapshot.group(parsed.group)
  if (group === undefined) return `the server serves no API group "${parsed.group}"`
  const gv = snapshot.groupVersion(apiVersion)
  if (gv === undefined) {
    const versions = group.versions.map((v) => v.version).join(', ')
    return `group "${parsed.group}" serves version(s) ${versions}, not ${parsed.version}`
  }
  if (gv.freshness === 'Stale') {
    return `discovery of ${apiVersion} is unavailable: ${gv.staleReason ?? 'stale'}`
  }
  const names = snapshot
    .resources()
    .filter((info) => info.apiVersion === apiVersion)
    .map((info) => (by === 'kind' ? info.kind : info.ref.resource))
    .filter((name) => name !== '')
  if (names.length === 0) return `${apiVersion} serves no resources`
  const shown = names.slice(0, 10).join(', ')
  return `${apiVersion} serves ${by === 'kind' ? 'kinds' : 'resources'} ${shown}${names.length > 10 ? ', …' : ''}`
}
