/**
 * The RBAC rules the engine needs to serve one CompositeController or DecoratorController,
 * computed from its spec alone (no discovery): `metactl rbac` prints them as an aggregated
 * ClusterRole (see {@link controllerClusterRole}).
 *
 * @remarks
 * Each verb is one the engine really sends for that role of resource (docs/deploy.md's table
 * names the code path behind each): parents and decorator targets are cached (list, watch),
 * re-read before a write (get), updated for finalizers and, without a status subresource, for
 * status (update), and merge-patched to answer `metactl sync` (patch); their `/status` is
 * written with PUT (update). Children and attachments are also created and deleted, and patched
 * by server-side apply (`--apply-strategy=server-side-apply`, an engine flag, so always granted).
 * Related objects of a customize hook, the Namespaces a `namespaceSelector` reads, and the
 * Secrets and ConfigMaps of webhook TLS and auth settings are only cached (list, watch).
 * ControllerRevisions of rolling updates are listed, watched, created, updated and deleted.
 *
 * @module
 */
import type { KubeObject } from '../core/kube-object.js'
import { groupOf } from '../core/owner-references.js'
import type { CompositeControllerSpec } from './composite-controller-spec.js'
import { parseCompositeControllerSpec } from './composite-controller-spec.js'
import type {
  ChildRule,
  ControllerHooks,
  HookSpec,
  ResourceRule,
} from './controller-spec-fields.js'
import type { DecoratorControllerSpec } from './decorator-controller-spec.js'
import { parseDecoratorControllerSpec } from './decorator-controller-spec.js'
import type { WebhookSecuritySpec } from './webhook-security-spec.js'

/** One rule of a ClusterRole, as the RBAC API spells it. */
export interface PolicyRule {
  readonly apiGroups: readonly string[]
  readonly resources: readonly string[]
  readonly verbs: readonly string[]
}

/** A controller to compute rules for: its kind, its name and its parsed spec. */
export type RbacController =
  | {
      readonly kind: 'CompositeController'
      readonly name: string
      readonly spec: CompositeControllerSpec
    }
  | {
      readonly kind: 'DecoratorController'
      readonly name: string
      readonly spec: DecoratorControllerSpec
    }

/** What the spec cannot say: what a customize hook answers at run time. */
export interface RbacOptions {
  /**
   * Resources the customize hook names in `relatedResources` (only used with a customize hook).
   * A rule with a `namespaceSelector` makes the engine cache Namespaces too: name `v1 namespaces`.
   */
  readonly related?: readonly ResourceRule[]
}

/** The order verbs are printed in (kubectl's). */
const VERB_ORDER = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] as const

type Verb = (typeof VERB_ORDER)[number]

/** Parents and decorator targets: cached, re-read, updated (finalizers), patched (`sync`). */
const PARENT_VERBS: readonly Verb[] = ['get', 'list', 'watch', 'update', 'patch']
/** `<parents>/status`: written with PUT, never read through the subresource. */
const STATUS_VERBS: readonly Verb[] = ['update']
/** Children and attachments: every write, `patch` for server-side apply. */
const CHILD_VERBS: readonly Verb[] = [...VERB_ORDER]
/** Related objects, Namespaces, Secrets and ConfigMaps: informer caches only. */
const CACHE_VERBS: readonly Verb[] = ['list', 'watch']
/** ControllerRevisions of a rolling update (no GET: read from a cache). */
const REVISION_VERBS: readonly Verb[] = ['list', 'watch', 'create', 'update', 'delete']

const ROLLING_METHODS: ReadonlySet<string> = new Set(['RollingRecreate', 'RollingInPlace'])

/** Verbs by `group` then resource, in first-seen order. */
type Grants = Map<string, Map<string, Set<Verb>>>

function grant(grants: Grants, group: string, resource: string, verbs: readonly Verb[]): void {
  const resources = grants.get(group) ?? new Map<string, Set<Verb>>()
  grants.set(group, resources)
  const held = resources.get(resource) ?? new Set<Verb>()
  resources.set(resource, held)
  for (const verb of verbs) held.add(verb)
}

function grantRule(grants: Grants, rule: ResourceRule, verbs: readonly Verb[]): void {
  grant(grants, groupOf(rule.apiVersion), rule.resource, verbs)
}

function grantParent(grants: Grants, rule: ResourceRule): void {
  grantRule(grants, rule, PARENT_VERBS)
  grantRule(grants, { ...rule, resource: `${rule.resource}/status` }, STATUS_VERBS)
}

function hooksOf(hooks: ControllerHooks): HookSpec[] {
  return [hooks.sync, hooks.finalize, hooks.customize].filter((h) => h !== undefined)
}

/** The kinds of objects webhook TLS and auth settings name (read from the engine's caches). */
function credentialKinds(hooks: ControllerHooks): Set<'secrets' | 'configmaps'> {
  const settings: WebhookSecuritySpec[] = [
    ...hooksOf(hooks).flatMap((h) =>
      h.webhook?.security === undefined ? [] : [h.webhook.security]
    ),
    ...(hooks.endpointConfigs ?? []),
  ]
  const kinds = new Set<'secrets' | 'configmaps'>()
  for (const s of settings) {
    if (s.caBundle?.source === 'configMap') kinds.add('configmaps')
    if (s.caBundle?.source === 'secret') kinds.add('secrets')
    if (s.clientTLS !== undefined || s.authorization !== undefined || s.basicAuth !== undefined)
      kinds.add('secrets')
  }
  return kinds
}

function grantShared(
  grants: Grants,
  children: readonly ChildRule[],
  hooks: ControllerHooks,
  options: RbacOptions
): void {
  for (const child of children) grantRule(grants, child, CHILD_VERBS)
  if (hooks.customize !== undefined) {
    for (const related of options.related ?? []) grantRule(grants, related, CACHE_VERBS)
  }
  for (const kind of credentialKinds(hooks)) grant(grants, '', kind, CACHE_VERBS)
}

/** Joins the resources of a group that need the same verbs into one rule. */
function rulesOf(grants: Grants): PolicyRule[] {
  const rules: PolicyRule[] = []
  for (const [group, resources] of grants) {
    const byVerbs = new Map<string, string[]>()
    for (const [resource, verbs] of resources) {
      const key = VERB_ORDER.filter((v) => verbs.has(v)).join(',')
      byVerbs.set(key, [...(byVerbs.get(key) ?? []), resource])
    }
    for (const [verbs, names] of byVerbs)
      rules.push({ apiGroups: [group], resources: names, verbs: verbs.split(',') })
  }
  return rules
}

/**
 * Returns the rules the engine needs to serve `controller`: parents (targets) and their status,
 * children (attachments), related resources and Namespaces of a customize hook, webhook
 * Secrets and ConfigMaps, and ControllerRevisions when a child rule rolls.
 *
 * @remarks
 * Resources of one group needing the same verbs share a rule; a resource in two roles gets the
 * union of their verbs. Events are not included: the engine's own ClusterRole grants them for
 * every controller.
 */
export function controllerRbacRules(
  controller: RbacController,
  options: RbacOptions = {}
): PolicyRule[] {
  const grants: Grants = new Map()
  if (controller.kind === 'CompositeController') {
    grantParent(grants, controller.spec.parentResource)
    grantShared(grants, controller.spec.childResources, controller.spec.hooks, options)
    // Only a composite rolls children out (a decorator ignores rolling methods); its revisions
    // are ControllerRevisions of our own group.
    if (controller.spec.childResources.some((c) => ROLLING_METHODS.has(c.updateMethod)))
      grant(grants, 'metacontroller.k8s.io', 'controllerrevisions', REVISION_VERBS)
  } else {
    for (const target of controller.spec.resources) grantParent(grants, target)
    grantShared(grants, controller.spec.attachments, controller.spec.hooks, options)
  }
  return rulesOf(grants)
}

/** The label metacontroller-ts' `…:controllers` ClusterRole aggregates (deploy/manifests, chart). */
export const AGGREGATE_TO_CONTROLLERS_LABEL = 'metacontroller-ts.dev/aggregate-to-controllers'

/**
 * Returns the aggregated ClusterRole `metacontroller-ts:<name>` holding `rules`, labelled so that
 * the engine's `metacontroller-ts:controllers` role takes them in (or with `labels` instead,
 * e.g. a Helm release's `rbac.aggregationLabels`).
 */
export function controllerClusterRole(
  name: string,
  rules: readonly PolicyRule[],
  labels: Readonly<Record<string, string>> = { [AGGREGATE_TO_CONTROLLERS_LABEL]: 'true' }
): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: `metacontroller-ts:${name}`, labels: { ...labels } },
    rules: rules.map((r) => ({
      apiGroups: [...r.apiGroups],
      resources: [...r.resources],
      verbs: [...r.verbs],
    })),
  }
}

/**
 * Reads a CompositeController or DecoratorController object into an {@link RbacController};
 * `undefined` for an object of any other kind.
 *
 * @throws {@link ControllerSpecError} when its spec is one the engine would refuse.
 */
export function rbacControllerOf(object: KubeObject): RbacController | undefined {
  const name = object.metadata.name ?? ''
  if ((object.apiVersion.split('/')[0] ?? '') !== 'metacontroller.k8s.io') return undefined
  if (object.kind === 'CompositeController')
    return { kind: object.kind, name, spec: parseCompositeControllerSpec(object['spec']) }
  if (object.kind === 'DecoratorController')
    return { kind: object.kind, name, spec: parseDecoratorControllerSpec(object['spec']) }
  return undefined
}
