/**
 * The RBAC right a request needed, read back from its method and path: what a 403 says is
 * missing, in the words of a ClusterRole rule (verb, API group, resource, namespace).
 *
 * @module
 */
import type { PolicyRule } from '../../api/controller-rbac-rules.js'

/** One right: a verb on a resource (with its subresource) of a group, in a namespace or not. */
export interface RequestRight {
  readonly verb: string
  readonly group: string
  readonly version: string
  /** The resource, with its subresource when there is one (`podservices/status`). */
  readonly resource: string
  /** Undefined for a cluster-wide request (all namespaces, or a cluster-scoped resource). */
  readonly namespace: string | undefined
}

function verbOf(method: string, named: boolean, query: URLSearchParams): string | undefined {
  switch (method.toUpperCase()) {
    case 'GET': {
      if (named) return 'get'
      const watch = query.get('watch')
      return watch === 'true' || watch === '1' ? 'watch' : 'list'
    }
    case 'POST':
      return named ? undefined : 'create'
    case 'PUT':
      return 'update'
    case 'PATCH':
      return 'patch'
    case 'DELETE':
      return named ? 'delete' : 'deletecollection'
    default:
      return undefined
  }
}

/**
 * Returns the right a request to `path` with `method` needs, or undefined for a path that names
 * no resource (discovery, `/version`, a malformed path).
 *
 * @example
 * rightOfRequest('PUT', '/apis/example.com/v1/namespaces/ns/webs/w/status')
 * // { verb: 'update', group: 'example.com', version: 'v1', resource: 'webs/status', namespace: 'ns' }
 */
export function rightOfRequest(method: string, path: string): RequestRight | undefined {
  const url = new URL(path, 'http://api.invalid')
  const segments = url.pathname.split('/').filter((s) => s !== '')
  let rest: string[]
  let group = ''
  let version: string | undefined
  if (segments[0] === 'api') [version, ...rest] = segments.slice(1)
  else if (segments[0] === 'apis') [group = '', version, ...rest] = segments.slice(1)
  else return undefined
  if (version === undefined || rest.length === 0) return undefined
  let namespace: string | undefined
  // `namespaces/<ns>/<resource>...` is namespaced; `namespaces` and `namespaces/<name>` are the
  // cluster-scoped Namespace resource itself.
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1]
    rest = rest.slice(2)
  }
  const [resource = '', name, subresource] = rest
  const verb = verbOf(method, name !== undefined, url.searchParams)
  if (verb === undefined || resource === '') return undefined
  return {
    verb,
    group,
    version,
    resource: subresource === undefined ? resource : `${resource}/${subresource}`,
    namespace,
  }
}

/** `list pods cluster-wide`, `update podservices/status.homelabz.com.br in namespace ns`. */
export function describeRight(right: RequestRight): string {
  const group = right.group === '' ? '' : `.${right.group}`
  const where = right.namespace === undefined ? 'cluster-wide' : `in namespace ${right.namespace}`
  return `${right.verb} ${right.resource}${group} ${where}`
}

/** Tells whether `rules` grant `right` (exact names: the computed rules use no wildcards). */
export function rulesGrant(rules: readonly PolicyRule[], right: RequestRight): boolean {
  return rules.some(
    (rule) =>
      rule.apiGroups.includes(right.group) &&
      rule.resources.includes(right.resource) &&
      rule.verbs.includes(right.verb)
  )
}

/**
 * The description an informer of the right's collection has (`describeCollection`'s words:
 * `pods.v1`, `webs.v1.example.com in ns`), for matching readiness entries to forbidden lists.
 */
export function collectionOf(right: RequestRight): string {
  const group = right.group === '' ? '' : `.${right.group}`
  const where = right.namespace === undefined ? '' : ` in ${right.namespace}`
  return `${right.resource}.${right.version}${group}${where}`
}
