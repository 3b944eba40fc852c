/**
 * Related objects: which objects a customize hook's rules select, as pure functions over informer
 * caches (upstream `pkg/controller/common/customize/manager.go`, spec §2.5).
 *
 * @remarks
 * A rule is first turned into a {@link RelatedSelection}: where to look (one namespace, every
 * namespace, or the namespaces whose labels match) and what to keep (labels, names). The same
 * selection both lists the related objects for a sync ({@link selectRelatedObjects}) and decides
 * whether a related object's change concerns a parent ({@link matchesRelatedSelection}), so a
 * parent is woken exactly by the objects it would be sent.
 *
 * The selection type and the v1 restrictions follow the **customize** hook's version; how the
 * result is keyed and filtered for the sync hook is the wire codec's business (spec §2.2).
 *
 * @module
 */
import { objectKey } from '../../core/object-key.js'
import type { KubeObject } from '../../core/kube-object.js'
import { compileLabelSelector, equalityTerms, isEmptySelector } from '../../core/label-selector.js'
import type { EqualityTerm, LabelMatcher } from '../../core/label-selector.js'
import type { HookVersion, ObjectsByType, RelatedResourceRule } from '../../api/hook-model.js'
import { gvkKey } from '../../api/hook-model.js'
import type { ObjectQuery, ObjectReader } from '../../runtime/informers/object-store.js'
import { messageOf } from '../../core/message-of.js'

/**
 * How a related rule selects objects (upstream's `relatedObjectsSelectionType`).
 *
 * - `NamespaceSelector`: objects in every namespace whose labels match `namespaceSelector`.
 * - `NamespaceAndLabels`: objects in `namespace` matching `labelSelector`.
 * - `NamespaceAndNames`: objects in `namespace` (or anywhere), keeping only `names` if given.
 * - `Labels`: objects matching `labelSelector` (nil matches everything).
 */
export type RelatedSelectionType =
  'NamespaceSelector' | 'NamespaceAndLabels' | 'NamespaceAndNames' | 'Labels'

/** A related rule that cannot be used; the sync fails with this message (upstream: an error). */
export class RelatedRuleError extends Error {
  override readonly name = 'RelatedRuleError'
}

/** The related resource a rule names, as discovery resolved it. */
export interface RelatedResource {
  /** The rule's `apiVersion`; also the GVK key's apiVersion. */
  readonly apiVersion: string
  /** The kind discovery gives for the rule's resource. */
  readonly kind: string
  readonly namespaced: boolean
}

/** What a rule's selection depends on besides the rule. */
export interface RelatedSelectionContext {
  readonly parent: KubeObject
  /** Whether the parent resource is namespaced (from discovery, as upstream). */
  readonly parentNamespaced: boolean
  /** The customize hook's version: v1 keeps a namespaced parent to its own namespace. */
  readonly customizeVersion: HookVersion
  readonly resource: RelatedResource
}

/** Where a rule looks for related objects and which it keeps. */
export interface RelatedSelection {
  readonly type: RelatedSelectionType
  readonly apiVersion: string
  readonly kind: string
  /** The one namespace to look in; undefined means every namespace (or cluster-scoped objects). */
  readonly namespace: string | undefined
  /** Set for `NamespaceSelector`: matches the labels of the namespaces to look in. */
  readonly namespaceMatcher: LabelMatcher | undefined
  /** Matches the labels of the objects to keep. */
  readonly labels: LabelMatcher
  /**
   * The `labelSelector`'s equality requirements, which the cache's label index answers: every
   * object `labels` keeps meets them.
   */
  readonly equalities: readonly EqualityTerm[]
  /** The names to keep; undefined keeps every name. */
  readonly names: ReadonlySet<string> | undefined
}

function present<T>(value: T | null | undefined): value is T {
  return value !== undefined && value !== null
}

function describeRule(rule: RelatedResourceRule): string {
  return `${rule.resource} (${rule.apiVersion})`
}

/**
 * Returns the selection type of a rule, checking the combinations upstream refuses.
 *
 * @throws RelatedRuleError when `names` is combined with a selector, or `namespace` with
 * `namespaceSelector`.
 */
export function relatedSelectionType(rule: RelatedResourceRule): RelatedSelectionType {
  const hasLabelSelector = present(rule.labelSelector)
  const hasNamespaceSelector = present(rule.namespaceSelector)
  const hasNamespace = (rule.namespace ?? '') !== ''
  const hasNames = (rule.names ?? []).length > 0
  if (hasNames && (hasLabelSelector || hasNamespaceSelector)) {
    throw new RelatedRuleError(
      `related rule for ${describeRule(rule)} cannot have both names and labelSelector/namespaceSelector specified`
    )
  }
  if (hasNamespace && hasNamespaceSelector) {
    throw new RelatedRuleError(
      `related rule for ${describeRule(rule)} cannot have both namespace and namespaceSelector specified`
    )
  }
  if (hasNamespaceSelector) return 'NamespaceSelector'
  if (hasLabelSelector && hasNamespace) return 'NamespaceAndLabels'
  if (hasNamespace || hasNames) return 'NamespaceAndNames'
  return 'Labels'
}

function compile(
  rule: RelatedResourceRule,
  field: 'labelSelector' | 'namespaceSelector'
): LabelMatcher {
  try {
    return compileLabelSelector(rule[field])
  } catch (error) {
    // The wire decoder validates selectors already; an in-process customize function may not.
    const message = messageOf(error)
    throw new RelatedRuleError(`related rule for ${describeRule(rule)}: ${field}: ${message}`)
  }
}

/**
 * Turns one related rule into the selection it stands for (spec §2.5).
 *
 * @remarks
 * Choices where upstream is silent or inconsistent:
 * - A cluster-scoped related resource has no namespaces, so `namespace` is ignored for it (as in
 *   upstream's `TestGetRelatedObjects_IgnoreNamespaceForClusterScopedResource`), and the v1
 *   namespace checks only apply to namespaced resources (as upstream's NamespaceAndNames check).
 * - `NamespaceAndNames` with no namespace looks in every namespace, as upstream lists it, also for
 *   a v1 customize hook; a v1 sync hook then only sees the parent's namespace (spec §2.2).
 *
 * @throws RelatedRuleError for a combination upstream refuses, a `namespaceSelector` on a
 * cluster-scoped resource or from a v1 hook with a namespaced parent, or a v1 rule naming another
 * namespace than a namespaced parent's.
 */
export function relatedSelection(
  rule: RelatedResourceRule,
  context: RelatedSelectionContext
): RelatedSelection {
  const type = relatedSelectionType(rule)
  const { resource } = context
  const parentNamespace = context.parent.metadata.namespace ?? ''
  const v1Namespaced = context.customizeVersion === 'v1' && context.parentNamespaced
  const ruleNamespace = resource.namespaced ? (rule.namespace ?? '') : ''
  const base = {
    type,
    apiVersion: rule.apiVersion,
    kind: resource.kind,
    labels: compile(rule, 'labelSelector'),
    // Compiling validated the selector, so listing its requirements cannot throw.
    equalities: equalityTerms(rule.labelSelector),
    names: (rule.names ?? []).length > 0 ? new Set(rule.names) : undefined,
  }
  const checkV1Namespace = (): void => {
    if (v1Namespaced && ruleNamespace !== '' && ruleNamespace !== parentNamespace) {
      throw new RelatedRuleError(
        `requested related object namespace ${ruleNamespace} differs from parent object namespace ${parentNamespace}`
      )
    }
  }
  switch (type) {
    case 'NamespaceSelector':
      if (!resource.namespaced) {
        throw new RelatedRuleError(
          'namespaceSelector is only supported for namespaced related resources'
        )
      }
      if (v1Namespaced) {
        throw new RelatedRuleError(
          `namespaceSelector in the related rule for ${describeRule(rule)} needs a v2 customize hook when the parent is namespaced`
        )
      }
      return {
        ...base,
        namespace: undefined,
        namespaceMatcher: compile(rule, 'namespaceSelector'),
      }
    case 'NamespaceAndLabels':
    case 'NamespaceAndNames':
      checkV1Namespace()
      return {
        ...base,
        namespace: ruleNamespace === '' ? undefined : ruleNamespace,
        namespaceMatcher: undefined,
      }
    case 'Labels':
      return {
        ...base,
        // A v1 hook of a namespaced parent only ever sees its own namespace.
        namespace: v1Namespaced && resource.namespaced ? parentNamespace : undefined,
        namespaceMatcher: undefined,
      }
    default: {
      const unreachable: never = type
      throw new Error(`unknown selection type ${String(unreachable)}`)
    }
  }
}

/** Tells whether a rule lists every object of the selected namespaces (upstream logs the cost). */
export function selectsWholeNamespaces(rule: RelatedResourceRule): boolean {
  return present(rule.namespaceSelector) && isEmptySelector(rule.labelSelector)
}

function keeps(selection: RelatedSelection, object: KubeObject): boolean {
  return (
    selection.labels(object.metadata.labels) &&
    (selection.names === undefined || selection.names.has(object.metadata.name ?? ''))
  )
}

/**
 * Lists the objects a selection keeps from a cache.
 *
 * @remarks
 * `namespaces` (a Namespace cache) is needed for `NamespaceSelector` only; without it nothing is
 * selected. Objects are the cached ones. The cache's indexes (namespace, names by key, the label
 * selector's equality terms) choose the candidates, so the cost follows what the rule can select,
 * not every object of the resource; only a selector without equality terms (nil, or only
 * `NotIn`, `Exists`, `DoesNotExist`) visits a whole namespace, or the whole cache.
 */
export function selectRelatedObjects(
  selection: RelatedSelection,
  store: ObjectReader,
  namespaces?: ObjectReader
): KubeObject[] {
  const query: ObjectQuery = {
    labels: selection.equalities,
    ...(selection.names === undefined ? {} : { names: selection.names }),
  }
  let candidates: KubeObject[]
  if (selection.namespaceMatcher !== undefined) {
    const matcher = selection.namespaceMatcher
    candidates = (namespaces?.list() ?? [])
      .filter((ns) => matcher(ns.metadata.labels))
      .flatMap((ns) => store.listMatching({ ...query, namespace: ns.metadata.name ?? '' }))
  } else if (selection.namespace !== undefined) {
    candidates = store.listMatching({ ...query, namespace: selection.namespace })
  } else {
    candidates = store.listMatching(query)
  }
  return candidates.filter((object) => keeps(selection, object))
}

/**
 * Tells whether a selection keeps an object of the selection's type, by the same rules as
 * {@link selectRelatedObjects}; the caller checks the object's type.
 *
 * @remarks
 * For `NamespaceSelector` the object's namespace is looked up in `namespaces`; an unknown
 * namespace (or no cache) matches nothing, as upstream's lister miss does.
 */
export function matchesRelatedSelection(
  selection: RelatedSelection,
  object: KubeObject,
  namespaces?: ObjectReader
): boolean {
  const namespace = object.metadata.namespace ?? ''
  if (selection.namespaceMatcher !== undefined) {
    if (namespace === '') return false
    const ns = namespaces?.get(namespace)
    if (ns === undefined || !selection.namespaceMatcher(ns.metadata.labels)) return false
  } else if (selection.namespace !== undefined && namespace !== selection.namespace) {
    return false
  }
  return keeps(selection, object)
}

/** One rule's selection and the cache of its resource. */
export interface SelectedRule {
  readonly selection: RelatedSelection
  readonly store: ObjectReader
}

/**
 * Builds the `related` map of a sync request: one entry per rule, keyed `Kind.apiVersion` and
 * then uniformly (`namespace/name` or `name`), even when a rule selects nothing; rules of one
 * type share that type's entry.
 */
export function relatedObjectsByType(
  rules: readonly SelectedRule[],
  namespaces?: ObjectReader
): ObjectsByType {
  const related = new Map<string, Map<string, KubeObject>>()
  for (const { selection, store } of rules) {
    const type = gvkKey(selection.apiVersion, selection.kind)
    let objects = related.get(type)
    if (objects === undefined) {
      objects = new Map()
      related.set(type, objects)
    }
    for (const object of selectRelatedObjects(selection, store, namespaces)) {
      // Cached objects carry apiVersion and kind: the dynamic client fills them into list items.
      objects.set(objectKey(object), object)
    }
  }
  return related
}
