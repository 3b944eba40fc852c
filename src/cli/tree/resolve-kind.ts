/**
 * Finds the resource a user means by `KIND` in `metactl tree KIND/NAME`, the way kubectl does:
 * a kind, plural, singular or short name, optionally qualified by group
 * (`podservices.homelabz.com.br`), in the group's preferred version.
 *
 * @module
 */
import type { ResourceInfo, ResourceMap } from '../../kube/resource-map.js'
import { CliError } from '../cli-error.js'

function names(info: ResourceInfo): string[] {
  return [info.kind.toLowerCase(), info.ref.resource, info.singularName, ...info.shortNames]
}

/** The main, listable resources of the map, one per group and resource, in preferred versions. */
export function preferredResources(map: ResourceMap): ResourceInfo[] {
  return map
    .resources()
    .filter((info) => info.verbs.includes('list') && info.verbs.includes('get'))
    .filter((info) => map.preferredVersion(info.ref.group) === info.ref.version)
}

/**
 * Resolves `text` to one resource.
 *
 * @throws {@link CliError} when nothing or more than one group matches.
 */
export function resolveKind(map: ResourceMap, text: string): ResourceInfo {
  const lower = text.toLowerCase()
  const dot = lower.indexOf('.')
  const name = dot === -1 ? lower : lower.slice(0, dot)
  const group = dot === -1 ? undefined : lower.slice(dot + 1)
  const matches = preferredResources(map).filter(
    (info) =>
      names(info).includes(name) &&
      (group === undefined || info.ref.group === group || info.apiVersion === group)
  )
  const [first] = matches
  if (first === undefined) {
    throw new CliError(
      `the server has no resource type "${text}" (try a kind, plural or short name, e.g. ` +
        'pods, deployment.apps, podservices.homelabz.com.br)'
    )
  }
  if (matches.length > 1) {
    // kubectl prefers the core group, then the first group; here an ambiguity is named instead.
    const core = matches.find((info) => info.ref.group === '')
    if (core !== undefined) return core
    const choices = matches.map((info) => `${info.ref.resource}.${info.ref.group}`).join(', ')
    throw new CliError(`"${text}" is ambiguous: ${choices}; qualify it with its group`)
  }
  return first
}
