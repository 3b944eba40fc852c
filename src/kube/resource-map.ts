/**
 * An immutable snapshot of the resources an API server serves, indexed for lookups by kind and
 * by resource name.
 *
 * @remarks
 * **Guarantees**
 * - Pure: built from already-parsed discovery data, no I/O, so it is unit-testable and can be
 *   shared between informers and the engine without locking.
 * - Frozen: every object it returns is frozen, so a consumer cannot corrupt the snapshot others
 *   read.
 * - Kinds are looked up among main resources only: `pods/status` also answers with kind `Pod`, but
 *   `Pod` means `pods`, as in upstream Metacontroller and client-go's REST mapper.
 *
 * @module
 */
import type { ResourceRef } from './dynamic-client.js'

/** A group, version and kind; `group` is `''` for the core group. */
export interface GroupVersionKind {
  readonly group: string
  readonly version: string
  readonly kind: string
}

/** Whether discovery data of a group-version is current or could not be refreshed. */
export type DiscoveryFreshness = 'Current' | 'Stale'

/** A subresource of a resource as discovery describes it, such as `status` or `scale`. */
export interface DiscoveredSubresource {
  /** Subresource name without the parent: `status`, not `pods/status`. */
  readonly name: string
  /** The kind the subresource returns (`autoscaling/v1 Scale` for `scale`), when known. */
  readonly responseKind: GroupVersionKind | undefined
  readonly verbs: readonly string[]
}

/** A resource of one group-version as discovery describes it (the input of a snapshot). */
export interface DiscoveredResource {
  /** Plural resource name, e.g. `pods`. */
  readonly resource: string
  /** The kind the resource returns, when known; a resource without one has no kind lookup. */
  readonly responseKind: GroupVersionKind | undefined
  readonly namespaced: boolean
  /** Singular name, e.g. `pod`; `''` when the server gave none. */
  readonly singularName: string
  readonly verbs: readonly string[]
  readonly shortNames: readonly string[]
  readonly categories: readonly string[]
  readonly subresources: readonly DiscoveredSubresource[]
}

/** One served version of a group, with its resources. */
export interface DiscoveredGroupVersion {
  readonly version: string
  /**
   * `Stale` when the last refresh could not read this group-version (an unavailable aggregated
   * APIService): `resources` are then the ones of an earlier snapshot, or empty.
   */
  readonly freshness: DiscoveryFreshness
  /** Why the data is stale, for error messages; absent when current. */
  readonly staleReason?: string
  readonly resources: readonly DiscoveredResource[]
}

/** One API group and its served versions, most preferred first. */
export interface DiscoveredGroup {
  /** Group name; `''` for the core group. */
  readonly name: string
  /** The server's preferred version; the first of `versions` when absent. */
  readonly preferredVersion?: string
  readonly versions: readonly DiscoveredGroupVersion[]
}

/** What a lookup returns: where a resource lives and what it supports. */
export interface ResourceInfo {
  /** The collection to address with the dynamic client (for a subresource: its parent's). */
  readonly ref: ResourceRef
  /** The `apiVersion` of `ref`: `v1`, `apps/v1`. */
  readonly apiVersion: string
  /** The kind this endpoint returns: `Pod` for `pods` and `pods/status`, `Scale` for `scale`. */
  readonly kind: string
  /** The full kind this endpoint returns, when the server gave one. */
  readonly responseKind: GroupVersionKind | undefined
  /** Singular name; `''` when unknown or for a subresource. */
  readonly singularName: string
  readonly verbs: readonly string[]
  readonly shortNames: readonly string[]
  readonly categories: readonly string[]
  /** Subresource names of a main resource (`status`, `scale`); empty for a subresource. */
  readonly subresources: readonly string[]
  /** Set when this describes a subresource (`status` for a `pods/status` lookup). */
  readonly subresource?: string
}

/** Splits an `apiVersion` into group and version; `undefined` when it is malformed. */
export function parseApiVersion(
  apiVersion: string
): { readonly group: string; readonly version: string } | undefined {
  const parts = apiVersion.split('/')
  if (parts.length === 1 && parts[0] !== '') return { group: '', version: apiVersion }
  const [group = '', version = ''] = parts
  if (parts.length !== 2 || group === '' || version === '') return undefined
  return { group, version }
}

/** Formats a group and version as an `apiVersion`: `v1` for the core group, else `group/v`. */
export function formatApiVersion(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`
}

interface GroupVersionIndex {
  readonly data: DiscoveredGroupVersion
  readonly byResource: ReadonlyMap<string, ResourceInfo>
  readonly byKind: ReadonlyMap<string, ResourceInfo>
}

function freezeStrings(values: readonly string[]): readonly string[] {
  return Object.freeze([...values])
}

function freezeKind(kind: GroupVersionKind | undefined): GroupVersionKind | undefined {
  return kind === undefined ? undefined : Object.freeze({ ...kind })
}

function freezeResource(resource: DiscoveredResource): DiscoveredResource {
  return Object.freeze({
    ...resource,
    responseKind: freezeKind(resource.responseKind),
    verbs: freezeStrings(resource.verbs),
    shortNames: freezeStrings(resource.shortNames),
    categories: freezeStrings(resource.categories),
    subresources: Object.freeze(
      resource.subresources.map((sub) =>
        Object.freeze({
          ...sub,
          responseKind: freezeKind(sub.responseKind),
          verbs: freezeStrings(sub.verbs),
        })
      )
    ),
  })
}

function freezeGroup(group: DiscoveredGroup): DiscoveredGroup {
  return Object.freeze({
    ...group,
    versions: Object.freeze(
      group.versions.map((gv) =>
        Object.freeze({ ...gv, resources: Object.freeze(gv.resources.map(freezeResource)) })
      )
    ),
  })
}

function indexGroupVersion(group: string, data: DiscoveredGroupVersion): GroupVersionIndex {
  const apiVersion = formatApiVersion(group, data.version)
  const byResource = new Map<string, ResourceInfo>()
  const byKind = new Map<string, ResourceInfo>()
  for (const resource of data.resources) {
    // A duplicate name would be a server bug; the first entry wins so results stay stable.
    if (byResource.has(resource.resource)) continue
    const ref: ResourceRef = Object.freeze({
      group,
      version: data.version,
      resource: resource.resource,
      namespaced: resource.namespaced,
    })
    const info: ResourceInfo = Object.freeze({
      ref,
      apiVersion,
      kind: resource.responseKind?.kind ?? '',
      responseKind: resource.responseKind,
      singularName: resource.singularName,
      verbs: resource.verbs,
      shortNames: resource.shortNames,
      categories: resource.categories,
      subresources: Object.freeze(resource.subresources.map((sub) => sub.name)),
    })
    byResource.set(resource.resource, info)
    if (info.kind !== '' && !byKind.has(info.kind)) byKind.set(info.kind, info)
    for (const sub of resource.subresources) {
      byResource.set(
        `${resource.resource}/${sub.name}`,
        Object.freeze({
          ref,
          apiVersion,
          kind: sub.responseKind?.kind ?? '',
          responseKind: sub.responseKind,
          singularName: '',
          verbs: sub.verbs,
          shortNames: Object.freeze([]),
          categories: Object.freeze([]),
          subresources: Object.freeze([]),
          subresource: sub.name,
        })
      )
    }
  }
  return { data, byResource, byKind }
}

/**
 * Holds the resources an API server served at one discovery refresh.
 *
 * @example
 * ```ts
 * const info = discovery.current().lookup({ apiVersion: 'apps/v1', kind: 'Deployment' })
 * // info?.ref → { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true }
 * // info?.subresources → ['scale', 'status']
 * ```
 */
export class ResourceMap {
  /** A snapshot with no groups, the state before the first refresh. */
  static readonly empty: ResourceMap = new ResourceMap([])

  readonly #groups: readonly DiscoveredGroup[]
  readonly #groupByName = new Map<string, DiscoveredGroup>()
  readonly #versions = new Map<string, GroupVersionIndex>()
  readonly #resources: readonly ResourceInfo[]
  #fingerprint: string | undefined

  /** Builds a snapshot from groups in the server's order; the input is copied and frozen. */
  constructor(groups: readonly DiscoveredGroup[]) {
    this.#groups = Object.freeze(groups.map(freezeGroup))
    const resources: ResourceInfo[] = []
    for (const group of this.#groups) {
      if (this.#groupByName.has(group.name)) continue
      this.#groupByName.set(group.name, group)
      for (const gv of group.versions) {
        const key = formatApiVersion(group.name, gv.version)
        if (this.#versions.has(key)) continue
        const index = indexGroupVersion(group.name, gv)
        this.#versions.set(key, index)
        for (const info of index.byResource.values()) {
          if (info.subresource === undefined) resources.push(info)
        }
      }
    }
    this.#resources = Object.freeze(resources)
  }

  /** Finds the main resource that serves a kind in an `apiVersion`. */
  lookup(gvk: { readonly apiVersion: string; readonly kind: string }): ResourceInfo | undefined {
    return this.#versions.get(gvk.apiVersion)?.byKind.get(gvk.kind)
  }

  /** Finds a resource (`pods`) or a subresource (`pods/status`) of an `apiVersion`. */
  lookupResource(apiVersion: string, resource: string): ResourceInfo | undefined {
    return this.#versions.get(apiVersion)?.byResource.get(resource)
  }

  /** Returns the server's preferred version of a group (`''` for core), if the group is served. */
  preferredVersion(group: string): string | undefined {
    const found = this.#groupByName.get(group)
    if (found === undefined) return undefined
    return found.preferredVersion ?? found.versions[0]?.version
  }

  /** Returns one group by name (`''` for core), with its versions most preferred first. */
  group(name: string): DiscoveredGroup | undefined {
    return this.#groupByName.get(name)
  }

  /** Returns the discovery data of one group-version (`v1`, `apps/v1`), current or stale. */
  groupVersion(apiVersion: string): DiscoveredGroupVersion | undefined {
    return this.#versions.get(apiVersion)?.data
  }

  /** Lists every group in the server's order. */
  groups(): readonly DiscoveredGroup[] {
    return this.#groups
  }

  /** Lists every main resource (no subresources) of every group-version. */
  resources(): readonly ResourceInfo[] {
    return this.#resources
  }

  /** Lists the group-versions (`apps/v1`) whose data could not be refreshed last time. */
  staleGroupVersions(): readonly string[] {
    return [...this.#versions.entries()]
      .filter(([, index]) => index.data.freshness === 'Stale')
      .map(([key]) => key)
  }

  /**
   * Tells whether two snapshots serve the same groups, versions and resources.
   *
   * @remarks
   * Freshness is ignored: a group-version going stale while its previous data is kept changes
   * nothing a consumer can address, so it must not restart informers.
   */
  hasSameResources(other: ResourceMap): boolean {
    return this === other || this.#getFingerprint() === other.#getFingerprint()
  }

  // A canonical JSON form, sorted so that a server reordering its lists is not a change.
  #getFingerprint(): string {
    this.#fingerprint ??= JSON.stringify(
      [...this.#groupByName.values()]
        .map((group) => ({
          name: group.name,
          preferred: this.preferredVersion(group.name),
          versions: group.versions
            .map((gv) => ({
              version: gv.version,
              resources: [...gv.resources]
                .map((resource) => ({
                  ...resource,
                  verbs: [...resource.verbs].sort(),
                  shortNames: [...resource.shortNames].sort(),
                  categories: [...resource.categories].sort(),
                  subresources: [...resource.subresources]
                    .map((sub) => ({ ...sub, verbs: [...sub.verbs].sort() }))
                    .sort((a, b) => compare(a.name, b.name)),
                }))
                .sort((a, b) => compare(a.resource, b.resource)),
            }))
            .sort((a, b) => compare(a.version, b.version)),
        }))
        .sort((a, b) => compare(a.name, b.name)),
      // undefined members vanish from JSON; make them explicit so a kind appearing is a change.
      (_key, value: unknown) => (value === undefined ? null : value)
    )
    return this.#fingerprint
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
