/**
 * The rollout's `Updated` condition on the parent status (spec §3.11 step 6).
 *
 * @module
 */
import type { JsonObject } from '../../core/kube-object.js'
import { isJsonObject } from '../../core/kube-object.js'

/** The type of the condition a rollout reports. */
export const UPDATED_CONDITION_TYPE = 'Updated'

/** A status condition as the rollout writes it. */
export interface StatusCondition {
  readonly type: string
  readonly status: string
  readonly reason?: string
  readonly message?: string
}

/**
 * Returns a copy of `status` with `condition` merged into `status.conditions` by type: an entry
 * of the same type is replaced in place, otherwise the condition is appended.
 *
 * @remarks
 * Upstream writes into the hook's status map and panics on a `null` status; here a `null` (or
 * non-object) status starts as `{}`, and a `conditions` that is not a list is replaced.
 */
export function setStatusCondition(status: unknown, condition: StatusCondition): JsonObject {
  const base: JsonObject = isJsonObject(status) ? structuredClone(status) : {}
  const entry: JsonObject = {
    type: condition.type,
    status: condition.status,
    ...(condition.reason === undefined || condition.reason === ''
      ? {}
      : { reason: condition.reason }),
    ...(condition.message === undefined || condition.message === ''
      ? {}
      : { message: condition.message }),
  }
  const existing = base['conditions']
  const list: unknown[] = Array.isArray(existing) ? [...(existing as unknown[])] : []
  const index = list.findIndex((c) => isJsonObject(c) && c['type'] === condition.type)
  if (index === -1) list.push(entry)
  else list[index] = entry
  base['conditions'] = list
  return base
}

/** Returns the condition of `type` in an object's `status.conditions`, if there is one. */
export function findStatusCondition(object: JsonObject, type: string): JsonObject | undefined {
  const status = object['status']
  if (!isJsonObject(status) || !Array.isArray(status['conditions'])) return undefined
  const found = (status['conditions'] as unknown[]).find(
    (c) => isJsonObject(c) && c['type'] === type
  )
  return isJsonObject(found) ? found : undefined
}
