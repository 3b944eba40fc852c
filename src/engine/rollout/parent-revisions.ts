/**
 * The revisions of one parent (spec §3.11 steps 2 to 4): the latest parent state with its
 * ControllerRevision (found among the claimed ones, or new), and every older revision with the
 * historical parent it stands for. Pure.
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { KubeObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import { makeControllerRef } from '../../core/owner-references.js'
import type { ControllerRevision } from './controller-revision.js'
import {
  CONTROLLER_REVISION_API_VERSION,
  REVISION_API_GROUP_LABEL,
  REVISION_RESOURCE_LABEL,
} from './controller-revision.js'
import { controllerRevisionName } from './revision-name.js'
import { applyRevisionPatch, makeRevisionPatch } from './revision-patch.js'

/** Where and how a parent's revisions are made. */
export interface RevisionSettings {
  /** The parent resource (plural) and its API group, for names and labels. */
  readonly parentResource: string
  readonly parentGroup: string
  /** `parentResource.revisionHistory.fieldPaths` (default `['spec']`). */
  readonly fieldPaths: readonly string[]
  /** The namespace revisions live in: the parent's, or the configured one for a cluster-scoped parent. */
  readonly namespace: string
  /** The labels of a new revision (see {@link revisionLabels}). */
  readonly labels: Readonly<Record<string, string>>
}

/** A revision paired with the parent state it stands for. */
export interface ParentRevision {
  /** The current parent for the latest revision; a rebuilt historical parent for the others. */
  readonly parent: KubeObject
  readonly revision: ControllerRevision
  /** The revision does not exist yet. */
  readonly isNew: boolean
}

/** Returns where a parent's revisions live: its own namespace, or `fallback` when it has none. */
export function revisionNamespace(parent: KubeObject, fallback: string): string {
  const namespace = parent.metadata.namespace
  return namespace === undefined || namespace === '' ? fallback : namespace
}

/** What {@link revisionLabels} builds the labels from. */
export interface RevisionLabelSource {
  /** The selector's `matchLabels` (`controller-uid` under `generateSelector`). */
  readonly selectorLabels: Readonly<Record<string, string>>
  /** Add the parent's `spec.template.metadata.labels` (not under `generateSelector`). */
  readonly useTemplate: boolean
  readonly parentGroup: string
  readonly parentResource: string
}

/**
 * Returns the labels of a new revision: the selector's `matchLabels` and, unless the selector
 * is generated, the parent's `spec.template.metadata.labels`; plus the parent group and
 * resource labels. Upstream takes only the template labels, so a parent without a template
 * makes revisions its own selector cannot find again once orphaned.
 */
export function revisionLabels(
  parent: KubeObject,
  source: RevisionLabelSource
): Record<string, string> {
  const { selectorLabels, parentGroup, parentResource } = source
  const spec = source.useTemplate ? parent['spec'] : undefined
  const template = isJsonObject(spec) ? spec['template'] : undefined
  const metadata = isJsonObject(template) ? template['metadata'] : undefined
  const raw = isJsonObject(metadata) ? metadata['labels'] : undefined
  const templateLabels: Record<string, string> = {}
  if (isJsonObject(raw)) {
    for (const [key, value] of Object.entries(raw))
      if (typeof value === 'string') templateLabels[key] = value
  }
  return {
    ...selectorLabels,
    ...templateLabels,
    [REVISION_API_GROUP_LABEL]: parentGroup,
    [REVISION_RESOURCE_LABEL]: parentResource,
  }
}

/**
 * Pairs the claimed revisions with parent states, the latest first: a revision whose patch
 * equals the current parent's is the latest's; each other one gets the current parent with its
 * patch written back. When none matches, the latest gets a new revision (not yet written).
 *
 * @throws `RevisionPatchError` when a field path runs through a value that is not an object.
 */
export function parentRevisions(
  parent: KubeObject,
  claimed: readonly ControllerRevision[],
  settings: RevisionSettings
): ParentRevision[] {
  const latestPatch = makeRevisionPatch(parent, settings.fieldPaths)
  let latest: ParentRevision | undefined
  const older: ParentRevision[] = []
  for (const revision of claimed) {
    if (isDeepStrictEqual(revision.parentPatch, latestPatch)) {
      // A second revision of the latest state (an adopted one) is left out, so it is deleted.
      latest ??= { parent, revision: structuredClone(revision), isNew: false }
      continue
    }
    older.push({
      parent: applyRevisionPatch(parent, revision.parentPatch, settings.fieldPaths),
      revision: structuredClone(revision),
      isNew: false,
    })
  }
  latest ??= {
    parent,
    revision: newControllerRevision(parent, latestPatch, settings),
    isNew: true,
  }
  return [latest, ...older]
}

function newControllerRevision(
  parent: KubeObject,
  patch: ControllerRevision['parentPatch'],
  settings: RevisionSettings
): ControllerRevision {
  return {
    apiVersion: CONTROLLER_REVISION_API_VERSION,
    kind: 'ControllerRevision',
    metadata: {
      name: controllerRevisionName(
        settings.parentResource,
        settings.parentGroup,
        parent.metadata.uid ?? '',
        patch
      ),
      namespace: settings.namespace,
      labels: { ...settings.labels },
      ownerReferences: [makeControllerRef(parent)],
    },
    parentPatch: patch,
    children: [],
  }
}
