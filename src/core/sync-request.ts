/**
 * The sync-request protocol between `metactl sync` and the engine, carried by two annotations on
 * the parent (or decorated object), so it needs only RBAC the engine already has and no port:
 *
 * - `metacontroller-ts.dev/sync-request: <nonce>`, set by the CLI; the update wakes the parent's
 *   controller, whose owning replica (the leader, or the shard owner) syncs it at once.
 * - `metacontroller-ts.dev/sync-result: <nonce> ok` or `<nonce> error: <reason>`, written by that
 *   replica once a sync that began after the request ends. A request is pending while the result
 *   does not carry its nonce; the request annotation itself stays as the record of what was asked.
 *
 * @module
 */
import type { KubeObject } from './kube-object.js'

/** The annotation `metactl sync` sets to ask for a sync. */
export const SYNC_REQUEST_ANNOTATION = 'metacontroller-ts.dev/sync-request'

/** The annotation the engine answers a sync request in. */
export const SYNC_RESULT_ANNOTATION = 'metacontroller-ts.dev/sync-result'

/** Longest reason kept in a result annotation; longer ones are cut with an ellipsis. */
export const MAX_SYNC_RESULT_REASON = 1000

/** An answered sync request. */
export interface SyncResult {
  readonly nonce: string
  readonly ok: boolean
  /** The sync's error, for a failed one. */
  readonly reason?: string
}

function annotation(object: KubeObject, name: string): string | undefined {
  const value = object.metadata.annotations?.[name]
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined
}

/** Parses a result annotation value; undefined when it is not one. */
export function parseSyncResult(value: string | undefined): SyncResult | undefined {
  const match = /^(\S+) (ok|error: ([\s\S]*))$/.exec(value?.trim() ?? '')
  if (match === null) return undefined
  const nonce = match[1] ?? ''
  return match[2] === 'ok' ? { nonce, ok: true } : { nonce, ok: false, reason: match[3] ?? '' }
}

/** The result annotation of an object, parsed. */
export function syncResultOf(object: KubeObject): SyncResult | undefined {
  return parseSyncResult(annotation(object, SYNC_RESULT_ANNOTATION))
}

/** The nonce of an object's unanswered sync request, if it has one. */
export function pendingSyncRequest(object: KubeObject): string | undefined {
  const nonce = annotation(object, SYNC_REQUEST_ANNOTATION)
  if (nonce === undefined) return undefined
  return syncResultOf(object)?.nonce === nonce ? undefined : nonce
}

/** The result annotation value for a sync's outcome (`error` undefined: it succeeded). */
export function formatSyncResult(nonce: string, error?: unknown): string {
  if (error === undefined) return `${nonce} ok`
  const message = error instanceof Error ? error.message : JSON.stringify(error)
  const text = message.replace(/\s+/g, ' ').trim()
  const reason =
    text.length > MAX_SYNC_RESULT_REASON ? `${text.slice(0, MAX_SYNC_RESULT_REASON - 1)}…` : text
  return `${nonce} error: ${reason || 'unknown error'}`
}
