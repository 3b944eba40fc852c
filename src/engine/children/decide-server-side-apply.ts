/**
 * The pure half of server-side apply: what configuration is applied, and whether a child needs a
 * request at all.
 *
 * @remarks
 * Upstream (spec §4) skips a child when a process-wide cache says the same configuration was
 * applied at the same `generation` (or `resourceVersion` for objects without one). That keeps
 * steady state quiet, but misses drift: a label removed from a Deployment leaves its generation
 * alone, and upstream's users report Services, ConfigMaps and Secrets left drifted (#1177) and
 * `resyncPeriodSeconds` having no effect (#1136), since a resync meets the same cache hit.
 *
 * Here the cache only says what was applied at which `resourceVersion`. Whenever the observed
 * child has another `resourceVersion` (someone wrote it), the configuration is compared with the
 * observed object itself ({@link isAppliedIn}): every field the engine applies must still hold
 * the applied value. Drift in any field, on any kind, is therefore re-applied on the child's
 * change event or the next resync, while an unchanged child costs no request. A false alarm (a
 * value the server normalises, a list another manager added to) costs one no-op apply, after
 * which the cache matches the `resourceVersion` again.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import type { JsonObject, KubeObject, OwnerReference } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'
import { isDeleting } from '../../core/owner-references.js'
import type { UpdateMethod } from '../../api/composite-controller-spec.js'
// The server-owned `metadata` fields are the dynamic apply's list (spec §3.9).
import { LAST_APPLIED_ANNOTATION, SYSTEM_METADATA_FIELDS } from './dynamic-apply.js'
import { marshalGoJson } from './marshal-go-json.js'

/**
 * Removes what a parent must never apply: server-owned `metadata`, `status`, and the legacy
 * last-applied annotation. Returns a copy.
 *
 * @remarks
 * A hook that echoes an observed child back would otherwise claim ownership of its
 * `resourceVersion` (an apply conflict) or of fields only the server or the child's own
 * controller write.
 */
export function sanitizeObject(object: KubeObject): KubeObject {
  const copy = structuredClone(object)
  const metadata = copy.metadata as JsonObject
  for (const field of SYSTEM_METADATA_FIELDS) Reflect.deleteProperty(metadata, field)
  Reflect.deleteProperty(copy, 'status')
  const annotations = copy.metadata.annotations
  if (annotations !== undefined && Object.hasOwn(annotations, LAST_APPLIED_ANNOTATION)) {
    Reflect.deleteProperty(annotations, LAST_APPLIED_ANNOTATION)
    if (Object.keys(annotations).length === 0) Reflect.deleteProperty(metadata, 'annotations')
  }
  return copy
}

/**
 * The configuration server-side apply sends for a desired child: the sanitised object
 * ({@link sanitizeObject}) carrying the parent's controller reference.
 *
 * @remarks
 * The reference is added unless an owner reference with the parent's UID is present, on updates
 * as well as creates (upstream), so that the engine co-owns it and never drops it by omission.
 */
export function applyConfiguration(desired: KubeObject, controllerRef: OwnerReference): KubeObject {
  const config = sanitizeObject(desired)
  const owners = config.metadata.ownerReferences ?? []
  if (!owners.some((ref) => ref.uid === controllerRef.uid)) {
    config.metadata.ownerReferences = [...owners, { ...controllerRef }]
  }
  return config
}

/** A digest of a configuration; key order does not matter. */
export function configurationHash(config: KubeObject): string {
  return createHash('sha256').update(marshalGoJson(config)).digest('base64url')
}

/**
 * Tells whether every field of `config` holds the same value in `observed`.
 *
 * @remarks
 * Fields the configuration lacks may hold anything (defaults, other managers' fields). Objects
 * compare key by key; lists item by item and must have the same length, which treats every list
 * as atomic: a list another manager added items to reads as drift and costs one no-op apply. A
 * `null` in the configuration asks for nothing and matches an absent field.
 */
export function isAppliedIn(config: unknown, observed: unknown): boolean {
  if (config === null || config === undefined) return observed === null || observed === undefined
  if (Array.isArray(config)) {
    const items = config as readonly unknown[]
    if (!Array.isArray(observed)) return false
    const have = observed as readonly unknown[]
    return items.length === have.length && items.every((item, i) => isAppliedIn(item, have[i]))
  }
  if (isJsonObject(config)) {
    if (!isJsonObject(observed)) return false
    return Object.keys(config).every((key) =>
      isAppliedIn(config[key], Object.hasOwn(observed, key) ? observed[key] : undefined)
    )
  }
  return config === observed
}

/** What the applier remembers of a child after applying to it. */
export interface AppliedRecord {
  readonly uid: string
  /** {@link configurationHash} of the configuration applied. */
  readonly hash: string
  /** The child's `resourceVersion` after the apply (or as observed when nothing was written). */
  readonly resourceVersion: string
  /**
   * The `resourceVersion` the apply was made over, when it wrote something: an informer that has
   * not yet caught up still shows it, and applying again would change nothing.
   */
  readonly appliedOver?: string
}

/** Input of {@link decideServerSideApply}. */
export interface ApplyDecisionInput {
  readonly observed: KubeObject | undefined
  /** The configuration ({@link applyConfiguration}). */
  readonly config: KubeObject
  readonly hash: string
  readonly record: AppliedRecord | undefined
  readonly method: UpdateMethod
}

/**
 * What to do for one desired child:
 *
 * - `create`: not observed, apply (the server creates it);
 * - `skip`: nothing to send (see `reason`);
 * - `apply`: apply the configuration (InPlace methods);
 * - `migrate`: first take the child over from the dynamic apply, then apply (InPlace methods);
 * - `dry-run`: apply with `dryRun`, and recreate the child only if that changes it (Recreate);
 * - `verify`: the fields hold the configuration, but nothing records this process applying it
 *   (a restart): read the child's managed fields to rule out fields applied before and no longer
 *   desired; when there are none, skip.
 */
export type ApplyDecision =
  | { readonly op: 'create' }
  | { readonly op: 'skip'; readonly reason: ApplySkipReason }
  | { readonly op: 'apply' | 'migrate' | 'dry-run' | 'verify' }

/** Why a child needs no request. */
export type ApplySkipReason =
  /** The child is being deleted. */
  | 'Deleting'
  /** `OnDelete`: an existing child is never written. */
  | 'OnDelete'
  /** This configuration was applied and the child has not been written since. */
  | 'Applied'
  /** The child was written by someone else, but every applied field still holds its value. */
  | 'InSync'

function isInPlace(method: UpdateMethod): boolean {
  return method === 'InPlace' || method === 'RollingInPlace'
}

/** Decides what {@link ApplyDecision} a desired child needs; pure. */
export function decideServerSideApply(input: ApplyDecisionInput): ApplyDecision {
  const { observed, record, method } = input
  if (observed === undefined) return { op: 'create' }
  if (isDeleting(observed)) return { op: 'skip', reason: 'Deleting' }
  if (method === 'OnDelete') return { op: 'skip', reason: 'OnDelete' }
  const write = isInPlace(method) ? 'apply' : 'dry-run'
  if (isInPlace(method) && hasLastApplied(observed)) return { op: 'migrate' }
  const known = record !== undefined && record.uid === observed.metadata.uid
  if (known && record.hash === input.hash) {
    const version = observed.metadata.resourceVersion
    if (version === record.resourceVersion || version === record.appliedOver) {
      return { op: 'skip', reason: 'Applied' }
    }
    return isAppliedIn(input.config, observed) ? { op: 'skip', reason: 'InSync' } : { op: write }
  }
  // A changed configuration must be applied even when the fields hold it: fields applied before
  // and no longer desired are only removed by an apply. Without a record, the fields may hold it.
  if (!known && isAppliedIn(input.config, observed)) return { op: 'verify' }
  return { op: write }
}

/** Tells whether an object still carries the dynamic apply's last-applied annotation. */
export function hasLastApplied(object: KubeObject): boolean {
  return object.metadata.annotations?.[LAST_APPLIED_ANNOTATION] !== undefined
}
