/**
 * One discovery snapshot: the GETs that describe what an API server serves, aggregated or
 * legacy, and what a stale or failing group-version keeps from the previous snapshot.
 *
 * @module
 */
import { messageOf } from '../core/message-of.js'
import { NotFoundError } from './api-error.js'
import type { KubeRequest } from './kube-transport.js'
import {
  discoveryDocumentKind,
  parseAggregatedDiscovery,
  parseApiGroupList,
  parseApiResourceList,
  parseApiVersions,
} from './parse-discovery.js'
import type { AggregatedGroup } from './parse-discovery.js'
import { formatApiVersion, ResourceMap } from './resource-map.js'
import type { DiscoveredGroup, DiscoveredGroupVersion } from './resource-map.js'

/** The `Accept` header that asks for aggregated discovery (v2, then v2beta1, then legacy JSON). */
export const AGGREGATED_DISCOVERY_ACCEPT: string =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,' +
  'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,' +
  'application/json'

/** The part of `KubeTransport` that discovery uses, so that tests can pass a fake. */
export interface DiscoveryTransport {
  requestJson<T = unknown>(req: KubeRequest): Promise<T>
}

/** The part of `KubeTransport` that discovery uses, so that tests can pass a fake. */
export interface DiscoveryTransport {
  requestJson<T = unknown>(req: KubeRequest): Promise<T>
}

/** How {@link fetchResourceMap} asks and where it reports what it tolerated. */
export interface FetchResourceMapOptions {
  /** Asks for aggregated discovery; false forces the legacy per-group-version GETs. */
  readonly aggregated: boolean
  /** Legacy discovery only: how many group-version GETs run at once. */
  readonly concurrency: number
  /** Receives a stale or failed group-version; must not throw. */
  readonly report: (groupVersion: string, error: unknown) => void
}

/**
 * Fetches one snapshot of what the server serves: aggregated discovery (two GETs) when asked for
 * and served, else the legacy documents and one GET per group-version. A group-version that is
 * stale or fails keeps `previous`'s resources and is reported.
 */
export async function fetchResourceMap(
  transport: DiscoveryTransport,
  options: FetchResourceMapOptions,
  signal: AbortSignal,
  previous: ResourceMap
): Promise<ResourceMap> {
  const [core, named] = await Promise.all([
    fetchRoot(transport, options, '/api', signal, previous),
    fetchRoot(transport, options, '/apis', signal, previous),
  ])
  signal.throwIfAborted()
  return new ResourceMap([...core, ...named])
}

async function fetchRoot(
  transport: DiscoveryTransport,
  options: FetchResourceMapOptions,
  path: '/api' | '/apis',
  signal: AbortSignal,
  previous: ResourceMap
): Promise<DiscoveredGroup[]> {
  const body = await transport.requestJson({
    method: 'GET',
    path,
    accept: options.aggregated ? AGGREGATED_DISCOVERY_ACCEPT : 'application/json',
    signal,
  })
  const kind = discoveryDocumentKind(body)
  const core = path === '/api'
  if (kind === 'APIGroupDiscoveryList') {
    // /api describes only the core group (no name); /apis only named groups.
    const groups = parseAggregatedDiscovery(body).filter((g) => (g.name === '') === core)
    return groups.map((group) => fromAggregated(group, previous, options.report))
  }
  if (core && kind === 'APIVersions') {
    const fetched = await mapLimit(parseApiVersions(body), options.concurrency, (version) =>
      legacyGroupVersion(transport, options, '', version, signal, previous)
    )
    const versions = fetched.filter((gv) => gv !== undefined)
    return versions.length === 0 ? [] : [{ name: '', versions }]
  }
  if (!core && kind === 'APIGroupList') {
    const listed = parseApiGroupList(body)
    // One pool over every group-version: a cluster has dozens, mostly one per group.
    const pairs = listed.flatMap((group) => group.versions.map((version) => ({ group, version })))
    const fetched = await mapLimit(pairs, options.concurrency, ({ group, version }) =>
      legacyGroupVersion(transport, options, group.name, version, signal, previous)
    )
    return listed
      .map((group): DiscoveredGroup => {
        const versions = fetched.filter(
          (gv, i): gv is DiscoveredGroupVersion => gv !== undefined && pairs[i]?.group === group
        )
        return group.preferredVersion === undefined
          ? { name: group.name, versions }
          : { name: group.name, preferredVersion: group.preferredVersion, versions }
      })
      .filter((group) => group.versions.length > 0)
  }
  const expected = core ? 'APIVersions' : 'APIGroupList'
  throw new Error(
    `GET ${path}: expected an APIGroupDiscoveryList or ${expected}, got ${describeBody(body)}`
  )
}

function fromAggregated(
  group: AggregatedGroup,
  previous: ResourceMap,
  report: FetchResourceMapOptions['report']
): DiscoveredGroup {
  return {
    name: group.name,
    versions: group.versions.map((version): DiscoveredGroupVersion => {
      if (version.freshness === 'Current') return version
      const apiVersion = formatApiVersion(group.name, version.version)
      const reason =
        'the API server reports its discovery data as Stale (its APIService is unavailable)'
      report(apiVersion, new Error(`discovery of ${apiVersion}: ${reason}`))
      return {
        version: version.version,
        freshness: 'Stale',
        staleReason: reason,
        resources: previous.groupVersion(apiVersion)?.resources ?? [],
      }
    }),
  }
}

async function legacyGroupVersion(
  transport: DiscoveryTransport,
  options: FetchResourceMapOptions,
  group: string,
  version: string,
  signal: AbortSignal,
  previous: ResourceMap
): Promise<DiscoveredGroupVersion | undefined> {
  const apiVersion = formatApiVersion(group, version)
  const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`
  try {
    const body = await transport.requestJson({
      method: 'GET',
      path,
      accept: 'application/json',
      signal,
    })
    if (discoveryDocumentKind(body) !== 'APIResourceList') {
      throw new Error(`GET ${path}: expected an APIResourceList, got ${describeBody(body)}`)
    }
    return {
      version,
      freshness: 'Current',
      resources: parseApiResourceList(body, group, version),
    }
  } catch (error) {
    if (signal.aborted) throw error
    // Removed between the group list and this GET (a CRD version deleted): gone, not stale.
    if (error instanceof NotFoundError) return undefined
    options.report(apiVersion, error)
    return {
      version,
      freshness: 'Stale',
      staleReason: messageOf(error),
      resources: previous.groupVersion(apiVersion)?.resources ?? [],
    }
  }
}

function describeBody(body: unknown): string {
  if (typeof body === 'object' && body !== null && 'kind' in body) {
    const kind = body.kind
    return typeof kind === 'string' ? `kind "${kind}"` : 'an object without a kind'
  }
  return body === undefined ? 'an empty body' : typeof body
}

async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>
): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++
      results[index] = await fn(items[index] as T)
    }
  }
  await Promise.all(Array.from({ length: Math.min(Math.max(limit, 1), items.length) }, worker))
  return results
}
