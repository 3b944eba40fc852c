/**
 * Parsers for the API server's discovery documents: aggregated (`APIGroupDiscoveryList`, v2 and
 * v2beta1) and legacy (`APIVersions`, `APIGroupList`, `APIResourceList`).
 *
 * @remarks
 * **Guarantees**
 * - Tolerant: unknown fields are ignored, a malformed entry (a resource without a name, a version
 *   that is not a string) is skipped rather than failing the whole document, because one odd
 *   aggregated API server must not hide every other group.
 * - Legacy `pods/status` entries are folded into their parent's `subresources`, so both formats
 *   produce the same {@link DiscoveredResource} shape.
 *
 * @module
 */
import { isJsonObject } from '../core/kube-object.js'
import type { JsonObject } from '../core/kube-object.js'
import type {
  DiscoveredResource,
  DiscoveredSubresource,
  DiscoveryFreshness,
  GroupVersionKind,
} from './resource-map.js'

/** The kinds of discovery document this module understands. */
export type DiscoveryDocumentKind =
  'APIGroupDiscoveryList' | 'APIVersions' | 'APIGroupList' | 'APIResourceList'

/** One version of a group in an aggregated discovery document. */
export interface AggregatedVersion {
  readonly version: string
  readonly freshness: DiscoveryFreshness
  readonly resources: readonly DiscoveredResource[]
}

/** One group in an aggregated discovery document, its versions most preferred first. */
export interface AggregatedGroup {
  /** Group name; `''` for the core group (whose `metadata.name` is absent). */
  readonly name: string
  readonly versions: readonly AggregatedVersion[]
}

/** One group of a legacy `APIGroupList`. */
export interface LegacyGroup {
  readonly name: string
  /** Served versions, most preferred first, as the server lists them. */
  readonly versions: readonly string[]
  readonly preferredVersion: string | undefined
}

function stringField(object: JsonObject, field: string): string | undefined {
  const value = object[field]
  return typeof value === 'string' ? value : undefined
}

function stringList(value: unknown): readonly string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string')
    : []
}

function objectList(value: unknown): readonly JsonObject[] {
  return Array.isArray(value) ? value.filter(isJsonObject) : []
}

/**
 * Tells which discovery document a response body is.
 *
 * @remarks
 * `kind` decides; a body without one is recognised by shape, since some proxies and old
 * aggregated servers drop it. `undefined` means the body is none of them.
 */
export function discoveryDocumentKind(body: unknown): DiscoveryDocumentKind | undefined {
  if (!isJsonObject(body)) return undefined
  const kind = body['kind']
  if (
    kind === 'APIGroupDiscoveryList' ||
    kind === 'APIVersions' ||
    kind === 'APIGroupList' ||
    kind === 'APIResourceList'
  ) {
    return kind
  }
  if (kind !== undefined) return undefined
  if (Array.isArray(body['groups'])) return 'APIGroupList'
  if (Array.isArray(body['resources'])) return 'APIResourceList'
  if (Array.isArray(body['versions'])) return 'APIVersions'
  return undefined
}

// An empty version means "the version of the containing list", and then the group is too (an
// empty group alone is ambiguous: it also names the core group).
function responseKind(
  value: unknown,
  group: string,
  version: string,
  fallbackKind?: string
): GroupVersionKind | undefined {
  const raw = isJsonObject(value) ? value : {}
  const own = stringField(raw, 'kind') ?? ''
  const kind = own === '' ? (fallbackKind ?? '') : own
  if (kind === '') return undefined
  const ownVersion = stringField(raw, 'version') ?? ''
  if (ownVersion === '') return { group, version, kind }
  return { group: stringField(raw, 'group') ?? '', version: ownVersion, kind }
}

function aggregatedResource(
  raw: JsonObject,
  group: string,
  version: string
): DiscoveredResource | undefined {
  const resource = stringField(raw, 'resource')
  if (resource === undefined || resource === '' || resource.includes('/')) return undefined
  const subresources: DiscoveredSubresource[] = []
  for (const sub of objectList(raw['subresources'])) {
    const name = stringField(sub, 'subresource')
    if (name === undefined || name === '') continue
    subresources.push({
      name,
      responseKind: responseKind(sub['responseKind'], group, version),
      verbs: stringList(sub['verbs']),
    })
  }
  return {
    resource,
    responseKind: responseKind(raw['responseKind'], group, version),
    namespaced: raw['scope'] !== 'Cluster',
    singularName: stringField(raw, 'singularResource') ?? '',
    verbs: stringList(raw['verbs']),
    shortNames: stringList(raw['shortNames']),
    categories: stringList(raw['categories']),
    subresources,
  }
}

/**
 * Parses an aggregated discovery document (`APIGroupDiscoveryList`, v2 or v2beta1).
 *
 * @remarks
 * A version without `freshness` is `Current`, as the API defines. The resources of a `Stale`
 * version are returned as the server sent them; whether to trust them is the caller's choice.
 */
export function parseAggregatedDiscovery(body: unknown): readonly AggregatedGroup[] {
  if (!isJsonObject(body)) return []
  const groups: AggregatedGroup[] = []
  for (const item of objectList(body['items'])) {
    const metadata = isJsonObject(item['metadata']) ? item['metadata'] : {}
    const name = stringField(metadata, 'name') ?? ''
    const versions: AggregatedVersion[] = []
    for (const rawVersion of objectList(item['versions'])) {
      const version = stringField(rawVersion, 'version')
      if (version === undefined || version === '') continue
      const resources = objectList(rawVersion['resources'])
        .map((raw) => aggregatedResource(raw, name, version))
        .filter((resource) => resource !== undefined)
      versions.push({
        version,
        freshness: rawVersion['freshness'] === 'Stale' ? 'Stale' : 'Current',
        resources,
      })
    }
    groups.push({ name, versions })
  }
  return groups
}

/** Parses a legacy `APIVersions` document (the body of `GET /api`) into its versions. */
export function parseApiVersions(body: unknown): readonly string[] {
  return isJsonObject(body) ? stringList(body['versions']).filter((v) => v !== '') : []
}

function versionOf(value: unknown): string | undefined {
  if (!isJsonObject(value)) return undefined
  const version = stringField(value, 'version')
  if (version !== undefined && version !== '') return version
  // Some servers fill only groupVersion (`apps/v1`).
  const groupVersion = stringField(value, 'groupVersion')
  const last = groupVersion?.split('/').pop()
  return last === undefined || last === '' ? undefined : last
}

/** Parses a legacy `APIGroupList` document (the body of `GET /apis`). */
export function parseApiGroupList(body: unknown): readonly LegacyGroup[] {
  if (!isJsonObject(body)) return []
  const groups: LegacyGroup[] = []
  for (const group of objectList(body['groups'])) {
    const name = stringField(group, 'name')
    if (name === undefined || name === '') continue
    const versions = (Array.isArray(group['versions']) ? (group['versions'] as unknown[]) : [])
      .map(versionOf)
      .filter((version) => version !== undefined)
    groups.push({ name, versions, preferredVersion: versionOf(group['preferredVersion']) })
  }
  return groups
}

/**
 * Parses a legacy `APIResourceList` (the body of `GET /api/v1` or `/apis/<group>/<version>`).
 *
 * @remarks
 * `pods/status`-style entries become subresources of `pods`; one whose parent is not listed is
 * dropped, since nothing could address it. A subresource's kind defaults to its parent's only
 * when the server left it empty.
 */
export function parseApiResourceList(
  body: unknown,
  group: string,
  version: string
): readonly DiscoveredResource[] {
  if (!isJsonObject(body)) return []
  const entries = objectList(body['resources'])
  const parents = new Map<string, { base: DiscoveredResource; subs: DiscoveredSubresource[] }>()
  for (const raw of entries) {
    const name = stringField(raw, 'name')
    if (name === undefined || name === '' || name.includes('/') || parents.has(name)) continue
    parents.set(name, {
      base: {
        resource: name,
        responseKind: responseKind(raw, group, version),
        namespaced: raw['namespaced'] === true,
        singularName: stringField(raw, 'singularName') ?? '',
        verbs: stringList(raw['verbs']),
        shortNames: stringList(raw['shortNames']),
        categories: stringList(raw['categories']),
        subresources: [],
      },
      subs: [],
    })
  }
  for (const raw of entries) {
    const name = stringField(raw, 'name') ?? ''
    const slash = name.indexOf('/')
    if (slash <= 0) continue
    const parent = parents.get(name.slice(0, slash))
    const subName = name.slice(slash + 1)
    if (parent === undefined || subName === '') continue
    parent.subs.push({
      name: subName,
      responseKind: responseKind(raw, group, version, parent.base.responseKind?.kind),
      verbs: stringList(raw['verbs']),
    })
  }
  return [...parents.values()].map(({ base, subs }) => ({ ...base, subresources: subs }))
}
