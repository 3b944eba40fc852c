/**
 * ControllerRevision names (spec §3.11 step 4): the parent resource, then a SHA-1 of the parent
 * UID and the revision's patch, so that creating the revision of a given parent state is
 * idempotent and the same name upstream gives it.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import type { JsonObject } from '../../core/kube-object.js'
import { marshalGoJson } from '../children/marshal-go-json.js'

/** The longest object name the API server accepts. */
const MAX_NAME_LENGTH = 253

/** Length of a SHA-1 in hex. */
const HASH_LENGTH = 40

/**
 * Returns the hex SHA-1 of the parent UID followed by the patch's JSON bytes.
 *
 * @remarks
 * The patch is encoded as Go's `encoding/json` encodes it (sorted keys, HTML-safe escapes), so
 * the hash of a given parent state equals upstream's and a revision upstream wrote is found
 * again after a migration. The UID is in the hash because parents of different resources can
 * share a name; it is not used for lookup.
 */
export function controllerRevisionHash(parentUid: string, patch: JsonObject): string {
  return createHash('sha1').update(parentUid).update(marshalGoJson(patch)).digest('hex')
}

/**
 * Returns the name of the revision of a parent state: `<plural>.<group or "core">-<hash>`, the
 * prefix cut so that the name is at most 253 characters.
 */
export function controllerRevisionName(
  parentResource: string,
  parentGroup: string,
  parentUid: string,
  patch: JsonObject
): string {
  const prefix = `${parentResource}.${parentGroup === '' ? 'core' : parentGroup}`
  const room = MAX_NAME_LENGTH - HASH_LENGTH - 1
  return `${prefix.slice(0, room)}-${controllerRevisionHash(parentUid, patch)}`
}
