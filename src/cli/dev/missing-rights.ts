/**
 * The rights a project's controllers need that a set of RBAC rules does not grant: what
 * `metactl dev` warns about. Pure: the rules needed come from `metactl rbac`'s computation
 * ({@link controllerRbacRules}), the rules granted from the project's `deploy/` or the answers of
 * the API server, read elsewhere.
 *
 * @module
 */
import { controllerRbacRules } from '../../api/controller-rbac-rules.js'
import type { RbacController } from '../../api/controller-rbac-rules.js'

/** One right the engine needs for one controller: a verb on a resource of a group, cluster-wide. */
export interface NeededRight {
  readonly controller: string
  readonly kind: RbacController['kind']
  readonly verb: string
  /** The API group, `''` for the core group. */
  readonly group: string
  readonly resource: string
  /** `status` for `<resource>/status`; absent for the resource itself. */
  readonly subresource?: string
}

/** A rule of a ClusterRole as the RBAC API spells it (fields absent in YAML may be missing). */
export interface GrantedRule {
  readonly apiGroups?: readonly string[]
  readonly resources?: readonly string[]
  readonly verbs?: readonly string[]
  readonly resourceNames?: readonly string[]
}

/** Every right `controller` needs, one per verb and resource, in `metactl rbac`'s order. */
export function neededRights(controller: RbacController): NeededRight[] {
  return controllerRbacRules(controller).flatMap((rule) =>
    rule.apiGroups.flatMap((group) =>
      rule.resources.flatMap((path) => {
        const [resource = '', subresource] = path.split('/')
        return rule.verbs.map((verb) => ({
          controller: controller.name,
          kind: controller.kind,
          verb,
          group,
          resource,
          ...(subresource === undefined ? {} : { subresource }),
        }))
      })
    )
  )
}

/**
 * Tells whether `rule` grants `right` as the API server's RBAC authorizer decides: `*` matches
 * any verb, group or resource (subresources too), `*\/status` any resource's status; a rule
 * limited to `resourceNames` never grants a right over every object, which the engine needs.
 */
export function ruleGrants(rule: GrantedRule, right: NeededRight): boolean {
  if ((rule.resourceNames ?? []).length > 0) return false
  const verbs = rule.verbs ?? []
  const groups = rule.apiGroups ?? []
  const resources = rule.resources ?? []
  const path =
    right.subresource === undefined ? right.resource : `${right.resource}/${right.subresource}`
  return (
    (verbs.includes('*') || verbs.includes(right.verb)) &&
    (groups.includes('*') || groups.includes(right.group)) &&
    (resources.includes('*') ||
      resources.includes(path) ||
      (right.subresource !== undefined && resources.includes(`*/${right.subresource}`)))
  )
}

/** The rights of `needed` that no rule of `granted` grants, in the order of `needed`. */
export function missingRights(
  needed: readonly NeededRight[],
  granted: readonly GrantedRule[]
): NeededRight[] {
  return needed.filter((right) => !granted.some((rule) => ruleGrants(rule, right)))
}

/** The verbs a controller lacks on one resource (or subresource): one warning of `metactl dev`. */
export interface ResourceGap {
  readonly controller: string
  readonly kind: RbacController['kind']
  readonly group: string
  readonly resource: string
  readonly subresource?: string
  readonly verbs: readonly string[]
}

/**
 * Joins the rights of one controller on one resource into one gap, in first-seen order, so a
 * resource nothing grants is one line, not one per verb.
 */
export function gapsOf(rights: readonly NeededRight[]): ResourceGap[] {
  const gaps = new Map<string, { gap: ResourceGap; verbs: string[] }>()
  for (const right of rights) {
    const key = [right.controller, right.group, right.resource, right.subresource ?? ''].join(' ')
    const entry = gaps.get(key)
    if (entry !== undefined) {
      entry.verbs.push(right.verb)
      continue
    }
    const { verb, ...where } = right
    const verbs = [verb]
    gaps.set(key, { gap: { ...where, verbs }, verbs })
  }
  return [...gaps.values()].map(({ gap }) => gap)
}

/** `update on reloads/status in API group dev.example.com` (`the core API group` for `''`). */
export function describeGap(gap: ResourceGap): string {
  const path = gap.subresource === undefined ? gap.resource : `${gap.resource}/${gap.subresource}`
  const group = gap.group === '' ? 'the core API group' : `API group ${gap.group}`
  return `${gap.verbs.join(', ')} on ${path} in ${group}`
}
