/**
 * What a project's `deploy/` manifests grant the engine: its ServiceAccount, as they name it, and
 * the cluster-wide rules its ClusterRoles give that ServiceAccount once applied. Pure.
 *
 * @remarks
 * `metactl dev` runs the engine in-process with the user's credentials (usually an admin's), so a
 * right the project forgets is not refused under dev; it would be refused once deployed. Where the
 * engine's ServiceAccount does not exist in the target cluster, this is how dev finds the gap.
 *
 * @module
 */
import type { KubeObject } from '../../core/kube-object.js'
import { compileLabelSelector } from '../../core/label-selector.js'
import type { LabelSelector } from '../../core/label-selector.js'
import { AGGREGATE_TO_CONTROLLERS_LABEL } from '../../api/controller-rbac-rules.js'
import type { GrantedRule } from './missing-rights.js'

/** A ServiceAccount by namespace and name. */
export interface ServiceAccountName {
  readonly namespace: string
  readonly name: string
}

/** The engine's ServiceAccount in `deploy/manifests` (and so in the default install). */
export const DEFAULT_ENGINE_SERVICE_ACCOUNT: ServiceAccountName = {
  namespace: 'metacontroller',
  name: 'metacontroller',
}

interface Subject {
  readonly kind?: string
  readonly name?: string
  readonly namespace?: string
}

interface RoleRef {
  readonly kind?: string
  readonly name?: string
}

const isRbac = (o: KubeObject): boolean => o.apiVersion.startsWith('rbac.authorization.k8s.io/')
const clusterRolesOf = (objects: readonly KubeObject[]): KubeObject[] =>
  objects.filter((o) => isRbac(o) && o.kind === 'ClusterRole')
const bindingsOf = (objects: readonly KubeObject[]): KubeObject[] =>
  objects.filter((o) => isRbac(o) && o.kind === 'ClusterRoleBinding')
const subjectsOf = (binding: KubeObject): Subject[] =>
  (binding['subjects'] as Subject[] | undefined) ?? []
const roleRefOf = (binding: KubeObject): RoleRef =>
  (binding['roleRef'] as RoleRef | undefined) ?? {}
const selectorsOf = (role: KubeObject): LabelSelector[] =>
  (role['aggregationRule'] as { clusterRoleSelectors?: LabelSelector[] } | undefined)
    ?.clusterRoleSelectors ?? []

/**
 * The engine's ServiceAccount as `deploy/` names it: a ServiceAccount subject of a
 * ClusterRoleBinding there (one whose ClusterRole aggregates others first, the engine's own way of
 * being granted its controllers' rights), else {@link DEFAULT_ENGINE_SERVICE_ACCOUNT}.
 */
export function engineServiceAccountOf(objects: readonly KubeObject[]): ServiceAccountName {
  const aggregating = new Set(
    clusterRolesOf(objects)
      .filter((role) => selectorsOf(role).length > 0)
      .map((role) => role.metadata.name)
  )
  const bindings = bindingsOf(objects)
  const ordered = [
    ...bindings.filter((b) => aggregating.has(roleRefOf(b).name)),
    ...bindings.filter((b) => !aggregating.has(roleRefOf(b).name)),
  ]
  for (const binding of ordered) {
    const subject = subjectsOf(binding).find((s) => s.kind === 'ServiceAccount')
    if (subject?.name !== undefined)
      return { namespace: subject.namespace ?? 'default', name: subject.name }
  }
  return DEFAULT_ENGINE_SERVICE_ACCOUNT
}

/** Tells whether `subject` is, or is a group holding, the ServiceAccount. */
function subjectIs(subject: Subject, account: ServiceAccountName): boolean {
  if (subject.kind === 'ServiceAccount')
    return subject.name === account.name && (subject.namespace ?? '') === account.namespace
  if (subject.kind !== 'Group') return false
  return [
    'system:serviceaccounts',
    `system:serviceaccounts:${account.namespace}`,
    'system:authenticated',
  ].includes(subject.name ?? '')
}

function matchesAny(role: KubeObject, selectors: readonly LabelSelector[]): boolean {
  return selectors.some((selector) => {
    try {
      return compileLabelSelector(selector)(role.metadata.labels)
    } catch {
      // The API server refuses an invalid selector: it aggregates nothing.
      return false
    }
  })
}

/**
 * The rules `deploy/`'s ClusterRoles give `account`, cluster-wide: the ClusterRoles a
 * ClusterRoleBinding there binds to it, and those an aggregating ClusterRole it holds selects
 * (aggregation labels honoured). The engine's own `metacontroller-ts:controllers`, installed with
 * it rather than with the project, counts as held: a ClusterRole carrying
 * `metacontroller-ts.dev/aggregate-to-controllers: "true"` grants its rules to the engine.
 * RoleBindings grant in one namespace only, never what the engine needs cluster-wide.
 */
export function deployGrantedRules(
  objects: readonly KubeObject[],
  account: ServiceAccountName
): GrantedRule[] {
  const roles = clusterRolesOf(objects)
  const held = new Set<KubeObject>()
  for (const binding of bindingsOf(objects)) {
    const ref = roleRefOf(binding)
    if (ref.kind !== 'ClusterRole' || !subjectsOf(binding).some((s) => subjectIs(s, account)))
      continue
    for (const role of roles) if (role.metadata.name === ref.name) held.add(role)
  }
  const selectors: LabelSelector[] = [{ matchLabels: { [AGGREGATE_TO_CONTROLLERS_LABEL]: 'true' } }]
  // Aggregation reaches through aggregating roles: repeat until no role is added.
  const expanded = new Set<KubeObject>()
  for (let added = true; added;) {
    added = false
    for (const role of held) {
      if (!expanded.has(role)) selectors.push(...selectorsOf(role))
      expanded.add(role)
    }
    for (const role of roles) {
      if (held.has(role) || !matchesAny(role, selectors)) continue
      held.add(role)
      added = true
    }
  }
  return [...held].flatMap((role) => (role['rules'] as GrantedRule[] | undefined) ?? [])
}
