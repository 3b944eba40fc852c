/**
 * Checks and defaults the children a hook asked for, before anything is written.
 *
 * @remarks
 * Upstream creates children of undeclared types (never tracking them afterwards) and children in
 * other namespaces (never cleaning them up), and only checks selector labels after it has already
 * removed the finalizer. Here every check runs first, so a bad response changes nothing: the sync
 * fails with a message that says which child is wrong and why (see docs/compat.md).
 *
 * @module
 */
import { objectKey } from '../core/object-key.js'
import type { KubeObject } from '../core/kube-object.js'
import { isJsonObject } from '../core/kube-object.js'
import { gvkKey } from './hook-model.js'

/**
 * Raised for a hook response that asks for children the engine must not create; the sync is
 * retried with backoff, since the hook (not the parent) has to change.
 */
export class InvalidDesiredChildError extends Error {
  override readonly name = 'InvalidDesiredChildError'
}

/** Desired children grouped by GVK key, then uniform key. */
export type DesiredChildren = Map<string, Map<string, KubeObject>>

/** The controller's rules for desired children, whatever the parent. */
export interface DesiredChildrenRules {
  /** Where the rules are declared, for messages: `childResources` or `attachments`. */
  readonly ruleField?: string
  /** GVK keys of the declared child rules, e.g. `Pod.v1`. */
  readonly declaredTypes: ReadonlySet<string>
  /** Whether each declared GVK key is namespaced. */
  readonly namespaced: ReadonlyMap<string, boolean>
  /** Labels to add when absent (`controller-uid` under `generateSelector`). */
  readonly injectLabels: Readonly<Record<string, string>>
  /** Annotations to set on every child (the DecoratorController's marker). */
  readonly injectAnnotations?: Readonly<Record<string, string>>
  /** The parent's selector; every child's labels must match it. */
  readonly matchesSelector: (labels: Readonly<Record<string, string>>) => boolean
}

/** What {@link prepareDesiredChildren} needs to know about the parent and the rules. */
export interface DesiredChildrenContext extends DesiredChildrenRules {
  readonly parent: KubeObject
}

function describe(child: KubeObject): string {
  const ns = child.metadata.namespace
  return `${child.kind} ${ns === undefined || ns === '' ? '' : `${ns}/`}${child.metadata.name ?? '(no name)'}`
}

/**
 * Defaults each child's namespace to the parent's, injects selector labels, and checks type,
 * namespace, name, labels and duplicates; returns the children by GVK key and object key.
 *
 * @throws {@link InvalidDesiredChildError} for the first child that is wrong.
 */
export function prepareDesiredChildren(
  children: readonly KubeObject[],
  context: DesiredChildrenContext
): DesiredChildren {
  const parentNamespace = context.parent.metadata.namespace ?? ''
  const out: DesiredChildren = new Map()
  for (const type of context.declaredTypes) out.set(type, new Map())
  children.forEach((raw, index) => {
    if (!isJsonObject(raw) || !isJsonObject(raw.metadata)) {
      throw new InvalidDesiredChildError(`desired child #${index} is not an object with metadata`)
    }
    const child = structuredClone(raw)
    if (typeof child.metadata.name !== 'string' || child.metadata.name === '') {
      throw new InvalidDesiredChildError(
        `desired child #${index} (${child.kind}) has no metadata.name`
      )
    }
    const type = gvkKey(child.apiVersion, child.kind)
    const bucket = out.get(type)
    if (bucket === undefined) {
      throw new InvalidDesiredChildError(
        `desired child ${describe(child)} has type ${type}, which is not in ${context.ruleField ?? 'childResources'} ` +
          `(declared: ${[...context.declaredTypes].join(', ') || 'none'}); declare it, or use the declared apiVersion`
      )
    }
    const namespaced = context.namespaced.get(type) ?? true
    if (namespaced) {
      if (child.metadata.namespace === undefined || child.metadata.namespace === '') {
        if (parentNamespace === '') {
          // Upstream sends the create without a namespace, which the API server refuses.
          throw new InvalidDesiredChildError(
            `desired child ${describe(child)} is namespaced but has no metadata.namespace; ` +
              'the children of a cluster-scoped parent must name their namespace'
          )
        }
        child.metadata.namespace = parentNamespace
      } else if (parentNamespace !== '' && child.metadata.namespace !== parentNamespace) {
        throw new InvalidDesiredChildError(
          `desired child ${describe(child)} is in namespace ${child.metadata.namespace}, but its ` +
            `parent is in ${parentNamespace}; children of a namespaced parent must share its namespace`
        )
      }
    }
    const labels = child.metadata.labels ?? {}
    if (!isJsonObject(labels) || Object.values(labels).some((v) => typeof v !== 'string')) {
      throw new InvalidDesiredChildError(
        `labels on desired child ${describe(child)} must be a map of strings`
      )
    }
    const merged = { ...context.injectLabels, ...labels }
    // No empty map where the hook gave none: the API server drops it (omitempty), and the 3-way
    // merge would then see a change on every sync.
    if (child.metadata.labels !== undefined || Object.keys(merged).length > 0)
      child.metadata.labels = merged
    const annotations = child.metadata.annotations ?? {}
    if (
      !isJsonObject(annotations) ||
      Object.values(annotations).some((v) => typeof v !== 'string')
    ) {
      throw new InvalidDesiredChildError(
        `annotations on desired child ${describe(child)} must be a map of strings`
      )
    }
    if (context.injectAnnotations !== undefined) {
      child.metadata.annotations = { ...annotations, ...context.injectAnnotations }
    }
    if (!context.matchesSelector(merged)) {
      throw new InvalidDesiredChildError(
        `labels on desired child ${describe(child)} don't match parent selector: ` +
          JSON.stringify(merged)
      )
    }
    const key = objectKey(child)
    if (bucket.has(key)) {
      throw new InvalidDesiredChildError(`desired child ${describe(child)} appears twice`)
    }
    bucket.set(key, child)
  })
  return out
}
